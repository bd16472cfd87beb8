# pidb completion for bash: source it, or put it in
# /etc/bash_completion.d/pidb (pidb completion bash > /etc/bash_completion.d/pidb)
_pidb_complete() {
	local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" words inv="$PIDB_INVENTORY" i pre=""
	case "$prev" in
	-i|--inventory|-o|--output|--csv|--script|--setup-script)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--out|--dir|--png)
		COMPREPLY=($(compgen -d -- "$cur"))
		return ;;
	--workload)
		words=$("${COMP_WORDS[0]}" completion --values workloads 2>/dev/null) ;;
	--limit)
		for ((i = 1; i < COMP_CWORD; i++)); do
			case "${COMP_WORDS[i]}" in -i|--inventory) inv="${COMP_WORDS[i+1]}" ;; esac
		done
		words=$("${COMP_WORDS[0]}" completion --values hosts -i "$inv" 2>/dev/null)
		# a list: complete its last name, with a name the list has not yet
		if [[ "$cur" == *,* ]]; then
			pre="${cur%,*},"
			cur="${cur##*,}"
			local n kept=""
			for n in $words; do
				[[ ",$pre" == *",$n,"* ]] || kept+="$n "
			done
			words=$kept
		fi ;;
	*)
		if [[ "$cur" == -* ]]; then
			words=$("${COMP_WORDS[@]:0:COMP_CWORD}" "$cur" --generate-bash-completion 2>/dev/null)
		else
			words=$("${COMP_WORDS[@]:0:COMP_CWORD}" --generate-bash-completion 2>/dev/null)
			# a group's "help" and its "h": pidb help CMD is the top level's
			if ((COMP_CWORD > 1)); then
				words=$(printf '%s\n' $words | grep -vx -e help -e h)
			fi
		fi ;;
	esac
	COMPREPLY=($(compgen -P "$pre" -W "$words" -- "$cur"))
}
complete -o bashdefault -o default -F _pidb_complete pidb
