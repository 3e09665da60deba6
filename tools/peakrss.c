/* peakrss COMMAND [ARGS...]: run COMMAND, then print on stderr its peak
 * resident set size and CPU time as one line, "peak_rss_kb N cpu_seconds S",
 * and exit with its exit status. Used by bench/run.sh, which cannot count
 * on /usr/bin/time being installed. */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: peakrss COMMAND [ARGS...]\n");
    return 2;
  }
  pid_t pid = fork();
  if (pid < 0) {
    perror("peakrss: fork");
    return 2;
  }
  if (pid == 0) {
    execvp(argv[1], argv + 1);
    perror("peakrss: exec");
    _exit(127);
  }
  int status;
  struct rusage usage;
  if (wait4(pid, &status, 0, &usage) < 0) {
    perror("peakrss: wait");
    return 2;
  }
  double cpu = (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec * 1e-6 +
               (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec * 1e-6;
  fprintf(stderr, "peak_rss_kb %ld cpu_seconds %.6f\n", usage.ru_maxrss, cpu);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
