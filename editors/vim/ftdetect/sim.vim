" simvm's .sim scripts. Vim's own rules take *.sim for Simula, and they
" run first: set the filetype outright, not with :setfiletype.
autocmd BufNewFile,BufRead *.sim set filetype=sim
