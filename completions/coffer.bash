# bash completion for coffer(1), the pass-compatible password store.
#
# Installed as <datadir>/bash-completion/completions/coffer, bash-completion loads it the first
# time `coffer` is completed. It also works without bash-completion: `source` it from ~/.bashrc.
#
# coffer installed as `pass`: when this file is loaded under the name `pass` (for example through
# a symlink completions/pass -> coffer, which `make install-pass-shim` creates), it completes
# `pass` as well. To do the same by hand, after loading this file:
#
#     complete -o filenames -F _coffer pass
#
# Entry names come from the files of the store ($PASSWORD_STORE_DIR, else ~/.password-store):
# nothing is decrypted and coffer itself is never run.

# Commands offered for the first word.
_coffer_commands="init ls find grep show insert edit generate rm mv cp git help version"
_coffer_commands+=" history restore sync clone fsck git-credential docker-credential setup recipients otp audit secret-service"

# The word being completed with the shell's quoting taken off: an opening ' or ", and \ escapes.
_coffer_unquote() {
    local _coffer_word=$1 _coffer_result="" _coffer_index
    case $_coffer_word in
        \'*)
            printf -v "$2" '%s' "${_coffer_word:1}"
            return
            ;;
        \"*) _coffer_word=${_coffer_word:1} ;;
    esac
    for ((_coffer_index = 0; _coffer_index < ${#_coffer_word}; _coffer_index++)); do
        if [[ ${_coffer_word:_coffer_index:1} == "\\" ]]; then
            ((_coffer_index++))
        fi
        _coffer_result+=${_coffer_word:_coffer_index:1}
    done
    printf -v "$2" '%s' "$_coffer_result"
}

# Prints the names below the store folder $1 that start with $2 and are not hidden, one a line: folders
# with a trailing /, and (when $3 is "entries") entries without their .gpg.
_coffer_visible_names() {
    local root=$1 path name
    local -a paths
    mapfile -t paths < <(compgen -f -- "$root$2")
    for path in "${paths[@]}"; do
        name=${path#"$root"}
        [[ ${name##*/} == .* ]] && continue
        if [[ -d $path ]]; then
            printf '%s\n' "$name/"
        elif [[ $3 == entries && $path == *.gpg && -f $path ]]; then
            printf '%s\n' "${name%.gpg}"
        fi
    done
}

# Adds the store's entries and folders (or only its folders) that start with the current word.
#   $1: "entries" or "folders"
#   $2: 1 to follow a single matching folder down while it holds exactly one visible item
_coffer_complete_entries() {
    local kind=${1:-entries} expand=${2:-0}
    local root=${PASSWORD_STORE_DIR:-$HOME/.password-store}
    root=${root%/}/
    local word
    _coffer_unquote "$cur" word

    local -a found children
    mapfile -t found < <(_coffer_visible_names "$root" "$word" "$kind")

    if ((expand == 1 && ${#found[@]} == 1)); then
        while [[ ${found[0]} == */ ]]; do
            mapfile -t children < <(_coffer_visible_names "$root" "${found[0]}" entries)
            ((${#children[@]} == 1)) || break
            found=("${children[0]}")
        done
    fi

    COMPREPLY+=("${found[@]}")
    # A space after the word only when it is one complete entry name.
    if ((${#found[@]} > 1)) || [[ ${found[0]} == */ ]]; then
        compopt -o nospace 2>/dev/null
    fi
}

# Adds the e-mail addresses and fingerprints of the secret keys in the keyring.
#   $1: "public" for every key of the keyring (default: the secret keys)
_coffer_complete_keys() {
    type -P gpg >/dev/null || return
    local IFS=$'\n' keys listing=--list-secret-keys
    [[ ${1:-} == public ]] && listing=--list-keys
    keys=$(gpg "$listing" --with-colons 2>/dev/null | awk -F: '
        $1 == "sec" || $1 == "pub" { want = 1 }
        $1 == "fpr" && want { print $10; want = 0 }
        $1 == "uid" && match($10, /<[^>]*>/) { print substr($10, RSTART + 1, RLENGTH - 2) }')
    COMPREPLY+=($(compgen -W "$keys" -- "$cur"))
}

# Adds the recent commits of the store's git repository (for --revision).
_coffer_complete_revisions() {
    local root=${PASSWORD_STORE_DIR:-$HOME/.password-store}
    [[ -e $root/.git ]] || return
    local IFS=$'\n'
    COMPREPLY+=($(compgen -W "HEAD"$'\n'"$(git -C "$root" log --format=%h -n 30 2>/dev/null)" -- "$cur"))
}

# Adds the words in $1 that start with the current word.
_coffer_complete_words() {
    local IFS=$' \t\n'
    COMPREPLY+=($(compgen -W "$1" -- "$cur"))
}

# Adds the options in $1 that start with the current word, when it starts with "-".
_coffer_complete_options() {
    [[ $cur == -* ]] || return 1
    _coffer_complete_words "$1"
    return 0
}

_coffer() {
    COMPREPLY=()
    local cur=${COMP_WORDS[COMP_CWORD]} previous="" command=${COMP_WORDS[1]}
    ((COMP_CWORD > 0)) && previous=${COMP_WORDS[COMP_CWORD - 1]}
    # `--path=DIR` arrives as "--path" "=" "DIR" when "=" is a word break.
    if [[ $cur == = ]]; then
        previous+="="
        cur=""
    elif [[ $previous == = ]] && ((COMP_CWORD > 1)); then
        previous=${COMP_WORDS[COMP_CWORD - 2]}=
    fi

    if ((COMP_CWORD == 1)); then
        _coffer_complete_options "--help --version --clip -c --qrcode -q" && return
        _coffer_complete_words "$_coffer_commands"
        _coffer_complete_entries entries 1
        return
    fi

    # After "--", every word is a name.
    local index
    for ((index = 2; index < COMP_CWORD; index++)); do
        if [[ ${COMP_WORDS[index]} == -- ]]; then
            case $command in
                init) _coffer_complete_keys ;;
                recipients) _coffer_complete_keys public ;;
                find | search | grep | git | help | version | sync | clone | fsck | git-credential | docker-credential | setup | secret-service) ;;
                *) _coffer_complete_entries entries ;;
            esac
            return
        fi
    done

    case $command in
        init)
            case $previous in
                -p | --path | --path=) _coffer_complete_entries folders ;;
                *) _coffer_complete_options "--path -p" || _coffer_complete_keys ;;
            esac
            ;;
        ls | list)
            _coffer_complete_options "--clip -c --qrcode -q --flat" || _coffer_complete_entries entries 1
            ;;
        show | -*)
            case $previous in
                -r | --revision | --revision=) _coffer_complete_revisions ;;
                *)
                    _coffer_complete_options "--clip -c --qrcode -q --revision -r --field --json --flat" ||
                        _coffer_complete_entries entries 1
                    ;;
            esac
            ;;
        find | search | grep) ;;
        insert | add)
            _coffer_complete_options "--echo -e --multiline -m --force -f --field" || _coffer_complete_entries entries
            ;;
        edit | history)
            _coffer_complete_entries entries
            ;;
        generate)
            # NAME, then an optional length: only the first operand is completed.
            local operands=0
            for ((index = 2; index < COMP_CWORD; index++)); do
                [[ ${COMP_WORDS[index]} == -* ]] || ((operands++))
            done
            _coffer_complete_options "--no-symbols -n --clip -c --qrcode -q --in-place -i --force -f" ||
                ((operands > 0)) || _coffer_complete_entries entries
            ;;
        rm | remove | delete)
            _coffer_complete_options "--recursive -r --force -f" || _coffer_complete_entries entries
            ;;
        mv | rename | cp | copy)
            _coffer_complete_options "--force -f" || _coffer_complete_entries entries
            ;;
        restore)
            case $previous in
                --revision | --revision=) _coffer_complete_revisions ;;
                *) _coffer_complete_options "--revision" || _coffer_complete_entries entries ;;
            esac
            ;;
        git)
            if ((COMP_CWORD == 2)); then
                _coffer_complete_words "init status log show diff push pull fetch remote config commit reset revert rebase reflog"
            fi
            ;;
        help)
            if ((COMP_CWORD == 2)); then
                _coffer_complete_words "$_coffer_commands"
            fi
            ;;
        fsck)
            _coffer_complete_options "--fix"
            ;;
        setup)
            case $previous in
                --name | --email | --remote | --clone) ;;
                *) _coffer_complete_options "--name --email --no-passphrase --remote --clone" ;;
            esac
            ;;
        recipients)
            case $previous in
                -p | --path | --path=) _coffer_complete_entries folders ;;
                *)
                    _coffer_complete_options "--path -p" && return
                    local action=""
                    for ((index = 2; index < COMP_CWORD; index++)); do
                        case ${COMP_WORDS[index]} in
                            -p | --path) ((index++)) ;;
                            -*) ;;
                            *)
                                action=${COMP_WORDS[index]}
                                break
                                ;;
                        esac
                    done
                    if [[ -z $action ]]; then
                        _coffer_complete_words "add rm accept"
                    else
                        _coffer_complete_keys public
                    fi
                    ;;
            esac
            ;;
        audit)
            case $previous in
                --breached | --breached=)
                    compopt -o filenames 2>/dev/null
                    local word
                    _coffer_unquote "$cur" word
                    local IFS=$'\n'
                    COMPREPLY+=($(compgen -f -- "$word"))
                    ;;
                --age | --age= | --min-bits | --min-bits=) ;;
                *)
                    _coffer_complete_options "--json --show-passwords --age --breached --min-bits" ||
                        _coffer_complete_entries folders
                    ;;
            esac
            ;;
        git-credential)
            if ((COMP_CWORD == 2)); then
                _coffer_complete_words "get store erase"
            fi
            ;;
        docker-credential)
            if ((COMP_CWORD == 2)); then
                _coffer_complete_words "store get erase list version"
            fi
            ;;
        otp)
            # otp [code] NAME | otp insert|add|append [options] [NAME] | otp uri [options] NAME | otp validate URI
            if ((COMP_CWORD == 2)); then
                _coffer_complete_options "--clip -c" && return
                _coffer_complete_words "code show insert add append uri validate help version"
                _coffer_complete_entries entries 1
                return
            fi
            case ${COMP_WORDS[2]} in
                insert | add | append)
                    case $previous in
                        -i | --issuer | -a | --account | --issuer= | --account=) ;;
                        *)
                            _coffer_complete_options "--force -f --echo -e --secret -s --issuer -i --account -a" ||
                                _coffer_complete_entries entries
                            ;;
                    esac
                    ;;
                uri) _coffer_complete_options "--clip -c --qrcode -q" || _coffer_complete_entries entries 1 ;;
                validate | help | version) ;;
                *) _coffer_complete_options "--clip -c" || _coffer_complete_entries entries 1 ;;
            esac
            ;;
        secret-service)
            _coffer_complete_options "--replace"
            ;;
        clone)
            case $previous in
                --path | --path=)
                    compopt -o nospace 2>/dev/null
                    local folder word
                    local -a folders
                    _coffer_unquote "$cur" word
                    mapfile -t folders < <(compgen -d -- "$word")
                    for folder in "${folders[@]}"; do
                        COMPREPLY+=("$folder/")
                    done
                    ;;
                *) _coffer_complete_options "--path" ;;
            esac
            ;;
    esac
}

complete -o filenames -F _coffer coffer
if [[ ${BASH_SOURCE[0]##*/} == pass || ${BASH_SOURCE[0]##*/} == pass.bash ]]; then
    complete -o filenames -F _coffer pass
fi
