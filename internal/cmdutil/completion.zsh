#compdef pidb
# pidb completion for zsh: put it in a folder of $fpath as _pidb
# (pidb completion zsh > "${fpath[1]}/_pidb")
_pidb() {
	local -a words_
	local cur=${words[CURRENT]}
	if [[ "$cur" == -* ]]; then
		words_=(${(f)"$(${words[@]:0:CURRENT-1} "$cur" --generate-bash-completion 2>/dev/null)"})
	else
		words_=(${(f)"$(${words[@]:0:CURRENT-1} --generate-bash-completion 2>/dev/null)"})
	fi
	compadd -a words_
}
compdef _pidb pidb
