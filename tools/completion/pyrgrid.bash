# bash completion for the pyrgrid program: its commands, each command's options and the values of those that
# take a closed set; problem files (*.ini) after run, plan, solve and sweep.  The commands and options are read
# from the program's own --help (so that they follow the program that is installed), once per shell and
# program; the lists below stand in where the program cannot be run.
# Installed into share/bash-completion/completions/pyrgrid; by hand: source tools/completion/pyrgrid.bash

_pyrgrid_fallback_commands="run plan solve calibrate sweep frames assemble info"
_pyrgrid_common_options="--help --verbose --quiet -h -v -q"  # where the program cannot tell
declare -gA _pyrgrid_help_cache

# _pyrgrid_help PROGRAM [COMMAND]: the text of "PROGRAM [COMMAND] --help" in _pyrgrid_text (empty when the
# program cannot be run), cached: called outside $(...), so that the cache is this shell's
_pyrgrid_help() {
    local prog=$1 key="$1 $2" args=()
    [[ -n $2 ]] && args=("$2")
    if [[ -z ${_pyrgrid_help_cache[$key]+set} ]]; then
        local text=""
        if command -v -- "$prog" >/dev/null 2>&1; then
            # a program that does not answer within seconds leaves the lists above to stand in
            if command -v timeout >/dev/null 2>&1; then
                text=$(timeout 5 "$prog" "${args[@]}" --help 2>/dev/null </dev/null)
            else
                text=$("$prog" "${args[@]}" --help 2>/dev/null </dev/null)
            fi
        fi
        _pyrgrid_help_cache[$key]=$text
    fi
    _pyrgrid_text=${_pyrgrid_help_cache[$key]}
}

# _pyrgrid_commands PROGRAM: the commands in _pyrgrid_words, the words after "pyrgrid" at the start of the
# usage lines of its --help
_pyrgrid_commands() {
    _pyrgrid_help "$1" ""
    _pyrgrid_words=$(printf '%s\n' "$_pyrgrid_text" | sed -n 's/^  pyrgrid \([a-z][a-z-]*\).*/\1/p' | sort -u)
    _pyrgrid_words=${_pyrgrid_words:-$_pyrgrid_fallback_commands}
}

# _pyrgrid_options PROGRAM COMMAND: in _pyrgrid_words, every -x and --long-name that the command's --help
# mentions, and --help
_pyrgrid_options() {
    local prog=$1 cmd=$2
    _pyrgrid_commands "$prog"
    _pyrgrid_text=""
    # only a command that the program has is asked for its help
    if [[ $'\n'$_pyrgrid_words$'\n' == *$'\n'"$cmd"$'\n'* ]]; then
        _pyrgrid_help "$prog" "$cmd"
    fi
    if [[ -z $_pyrgrid_text ]]; then
        _pyrgrid_words=$_pyrgrid_common_options
        return
    fi
    _pyrgrid_words=$({
        printf '%s\n' "$_pyrgrid_text" | grep -oE -- '--[a-zA-Z][a-zA-Z0-9-]*'
        printf '%s\n' "$_pyrgrid_text" | grep -oE -- '(^|[][ |,])-[a-zA-Z]([][ |,]|$)' | grep -oE -- '-[a-zA-Z]'
        printf '%s\n' --help
    } | sort -u)
}

_pyrgrid() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} prog=${COMP_WORDS[0]}
    local cmd="" i values=""
    COMPREPLY=()
    prog=${prog/#\~/$HOME}
    # the command: the first word after the program that is not an option
    for ((i = 1; i < COMP_CWORD; i++)); do
        if [[ ${COMP_WORDS[i]} != -* ]]; then
            cmd=${COMP_WORDS[i]}
            break
        fi
    done

    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            mapfile -t COMPREPLY < <(compgen -W "--help --version" -- "$cur")
        else
            _pyrgrid_commands "$prog"
            mapfile -t COMPREPLY < <(compgen -W "$_pyrgrid_words" -- "$cur")
        fi
        return 0
    fi

    # the values of options that take a closed set or a file
    case $prev in
        --backend) values="auto cpu cuda" ;;
        --precision) values="float double all" ;;
        --decomposition) values="strips blocks slabs segments skewed all" ;;
        --weights) values="align poly plain" ;;
        --scheme) values="heat poisson maxwell all" ;;
        --report|--csv|--png|--import|--export|--config|--replot|-o|--residual|--shifts|--candidates|--snr-png|--max-snr)
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            return 0 ;;
        -s|--set|--heights|--passes|--repeat|--sizes|--pass-ms|--dims|--kernel|--threads|--device|--effort|--history|--threshold|--mask-bits)
            return 0 ;;
    esac
    if [[ -n $values ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$values" -- "$cur")
        return 0
    fi

    if [[ $cur == -* ]]; then
        _pyrgrid_options "$prog" "$cmd"
        mapfile -t COMPREPLY < <(compgen -W "$_pyrgrid_words" -- "$cur")
        return 0
    fi

    # arguments: problem files for the commands that run one, the index of parts for assemble, else any file
    compopt -o filenames 2>/dev/null
    case $cmd in
        run|plan|solve|sweep)
            mapfile -t COMPREPLY < <(compgen -f -X '!*.ini' -- "$cur"; compgen -d -- "$cur") ;;
        assemble)
            mapfile -t COMPREPLY < <(compgen -f -X '!*.json' -- "$cur"; compgen -f -X '!*.npy' -- "$cur"
                                     compgen -d -- "$cur") ;;
        *)
            mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
    esac
    return 0
}

complete -F _pyrgrid pyrgrid
