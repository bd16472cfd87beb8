# pidb completion for bash: source it, or put it in
# /etc/bash_completion.d/pidb (pidb completion bash > /etc/bash_completion.d/pidb)
_pidb_complete() {
	local cur="${COMP_WORDS[COMP_CWORD]}" words
	if [[ "$cur" == -* ]]; then
		words=$("${COMP_WORDS[@]:0:COMP_CWORD}" "$cur" --generate-bash-completion 2>/dev/null)
	else
		words=$("${COMP_WORDS[@]:0:COMP_CWORD}" --generate-bash-completion 2>/dev/null)
	fi
	COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o bashdefault -o default -F _pidb_complete pidb
