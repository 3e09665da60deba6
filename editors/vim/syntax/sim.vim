" Vim syntax file for simvm's .sim scripts (docs/LANGUAGE.md, lang/lexer.re).
" tests/check_editors.py checks its keywords and units against the lexer.
if exists("b:current_syntax")
  finish
endif

syn keyword simKeyword if then else match return let in import
syn keyword simFn fn nextgroup=simFnName skipwhite
syn match simFnName "\h\w*" contained
syn keyword simConstant true false none

" numbers: later matches win at the same column, so durations and bad
" numbers (3x, 10min) come after plain ones
syn match simNumber "\<\d[0-9_]*\>"
syn match simFloat "\<\d[0-9_]*\(\.\d[0-9_]*\([eE][+-]\=\d[0-9_]*\)\=\|[eE][+-]\=\d[0-9_]*\)\>"
syn match simError "\<\d[0-9_]*\(\.\d[0-9_]*\)\=\([eE][+-]\=\d[0-9_]*\)\=\([eE][+-]\=\d\)\@!\a\w*"
syn match simDuration "\<\d[0-9_]*\(\.\d[0-9_]*\)\=\([eE][+-]\=\d[0-9_]*\)\=\(ns\|us\|ms\|s\)\>"

syn match simOperator "<-\|=>\|>>=\|>>\|++\|==\|!=\|<=\|>=\|&&\|||\|[-+*/%<>=!|]"
syn match simDelimiter "#{\|[(){}\[\],;.:]"

" strings stay on their line; \n \t \r \\ \" \{ \} and \xHH (not \x00); {e} interpolates e
syn region simString start=+"+ skip=+\\.+ end=+"+ end=+$+ oneline contains=simEscape,simBadEscape
syn match simBadEscape +\\.\=+ contained
syn match simEscape +\\\([ntr\\"{}]\|x\(00\)\@!\x\x\)+ contained

" after the operators, so that -- starts a comment, not a minus
syn match simComment "--.*$" contains=simTodo
syn keyword simTodo TODO FIXME XXX contained

hi def link simKeyword   Keyword
hi def link simFn        Keyword
hi def link simFnName    Function
hi def link simConstant  Constant
hi def link simNumber    Number
hi def link simFloat     Float
hi def link simDuration  Number
hi def link simError     Error
hi def link simOperator  Operator
hi def link simDelimiter Delimiter
hi def link simString    String
hi def link simEscape    SpecialChar
hi def link simBadEscape Error
hi def link simComment   Comment
hi def link simTodo      Todo

let b:current_syntax = "sim"
