#compdef pidb
# pidb completion for zsh: put it in a folder of $fpath as _pidb
# (pidb completion zsh > "${fpath[1]}/_pidb")
_pidb() {
	local -a words_
	local cur=${words[CURRENT]} prev=${words[CURRENT-1]} inv=$PIDB_INVENTORY i
	case $prev in
	-i|--inventory|-o|--output|--csv|--script|--setup-script)
		_files
		return ;;
	--out|--dir|--png)
		_files -/
		return ;;
	--workload)
		words_=(${(f)"$(${words[1]} completion --values workloads 2>/dev/null)"}) ;;
	--limit)
		for ((i = 2; i < CURRENT; i++)); do
			case ${words[i]} in -i|--inventory) inv=${words[i+1]} ;; esac
		done
		words_=(${(f)"$(${words[1]} completion --values hosts -i "$inv" 2>/dev/null)"})
		compset -P '*,' ;;
	*)
		if [[ "$cur" == -* ]]; then
			words_=(${(f)"$(${words[@]:0:CURRENT-1} "$cur" --generate-bash-completion 2>/dev/null)"})
		else
			words_=(${(f)"$(${words[@]:0:CURRENT-1} --generate-bash-completion 2>/dev/null)"})
		fi ;;
	esac
	compadd -a words_
}
compdef _pidb pidb
