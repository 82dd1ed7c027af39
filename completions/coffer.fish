# fish completion for coffer(1), the pass-compatible password store.
#
# Installed as <datadir>/fish/vendor_completions.d/coffer.fish, fish loads it the first time
# `coffer` is completed.
#
# coffer installed as `pass`: when this file is loaded under the name pass.fish (for example
# through a symlink pass.fish -> coffer.fish, which `make install-pass-shim` creates), it
# completes `pass` instead. To do it by hand:
#
#     ln -s /usr/share/fish/vendor_completions.d/coffer.fish ~/.config/fish/completions/pass.fish
#
# Entry names come from the files of the store ($PASSWORD_STORE_DIR, else ~/.password-store):
# nothing is decrypted and coffer itself is never run.

set -l program coffer
if string match -q -- '*/pass.fish' (status current-filename)
    set program pass
end

# The store's root, without a trailing slash.
function __coffer_root
    if set -q PASSWORD_STORE_DIR; and test -n "$PASSWORD_STORE_DIR"
        string replace -r -- '/+$' '' $PASSWORD_STORE_DIR
    else
        echo $HOME/.password-store
    end
end

# Whether the command line holds only the program name so far.
function __coffer_needs_command
    test (count (commandline -opc)) -eq 1
end

# Whether the command (the second word) is one of the arguments.
function __coffer_using
    set -l words (commandline -opc)
    test (count $words) -gt 1; and contains -- $words[2] $argv
end

# Whether the command is one of the arguments and no operand has been given yet (options and an
# option's value excepted: $argv[1] lists the options that take a separate value, comma-separated).
function __coffer_first_operand
    set -l takes_value (string split , -- $argv[1])
    set -l words (commandline -opc)
    test (count $words) -gt 1; and contains -- $words[2] $argv[2..-1]; or return 1
    set -l skip 0
    for word in $words[3..-1]
        if test $skip -eq 1
            set skip 0
        else if contains -- $word $takes_value
            set skip 1
        else if string match -q -- '-*' $word
            continue
        else
            return 1
        end
    end
    return 0
end

# The entries (and, with -d, the folders) in the folder of the token being completed: one
# folder at a time, folders ending in "/", ".gpg" left out, hidden files skipped.
function __coffer_entries
    set -l root (__coffer_root)
    set -l token (commandline -ct)
    set -l folder (string match -r -- '^.*/' $token); or set folder ''
    test -d "$root/$folder"; or return
    for path in $root/$folder*
        set -l name (string replace -- "$root/" '' $path)
        if test -d $path
            printf '%s/\tFolder\n' $name
        else if test "$argv[1]" != --folders-only; and string match -q -- '*.gpg' $name
            printf '%s\tEntry\n' (string replace -r -- '\.gpg$' '' $name)
        end
    end
end

function __coffer_folders
    __coffer_entries --folders-only
end

# E-mail addresses and fingerprints of the secret keys in the keyring.
# With "public": every key of the keyring (default: the secret keys).
function __coffer_keys
    command -sq gpg; or return
    set -l listing --list-secret-keys
    test "$argv[1]" = public; and set listing --list-keys
    gpg $listing --with-colons 2>/dev/null | awk -F: '
        $1 == "sec" || $1 == "pub" { want = 1 }
        $1 == "fpr" && want { print $10; want = 0 }
        $1 == "uid" && match($10, /<[^>]*>/) { print substr($10, RSTART + 1, RLENGTH - 2) }'
end

# Recent commits of the store's git repository, with their subjects.
function __coffer_revisions
    set -l root (__coffer_root)
    printf 'HEAD\tthe last commit\n'
    test -e $root/.git; and git -C $root log --format='%h%x09%s' -n 30 2>/dev/null
end

complete -c $program -e
complete -c $program -f

# Commands.
set -l commands \
    init 'Initialize the store or a subfolder for gpg ids' \
    ls 'List entries as a tree' \
    find 'List entries whose names match' \
    grep 'Search inside decrypted entries' \
    show 'Print an entry, copy it or show it as a QR code' \
    insert 'Add an entry typed or piped in' \
    edit 'Edit an entry with $EDITOR' \
    generate 'Generate a new password' \
    rm 'Remove an entry or folder' \
    mv 'Rename an entry or folder' \
    cp 'Copy an entry or folder' \
    git 'Run git in the store' \
    history 'List the commits that changed an entry' \
    restore 'Bring back an entry as it was at a revision' \
    sync 'Pull and push the store, merging entries' \
    clone 'Clone a store from a git remote' \
    fsck 'Check the store and optionally repair it' \
    audit 'Report weak, reused, old and breached passwords' \
    git-credential 'git credential helper (get, store, erase)' \
    docker-credential 'docker credential helper (store, get, erase, list)' \
    otp 'One-time codes from otpauth:// URIs (as pass-otp)' \
    setup 'First run: make a key, set up or clone the store' \
    recipients 'List, add or remove the recipients of the store or a folder' \
    secret-service 'Serve the store as the Secret Service on the session bus' \
    help 'Show usage, or the usage of one command' \
    version 'Show the version'
for index in (seq 1 2 (count $commands))
    complete -c $program -n __coffer_needs_command -a $commands[$index] -d $commands[(math $index + 1)]
end
complete -c $program -n __coffer_needs_command -l help -d 'Show usage'
complete -c $program -n __coffer_needs_command -l version -d 'Show the version'

# `coffer NAME`, `coffer -c NAME`: show.
complete -c $program -n __coffer_needs_command -a '(__coffer_entries)'
complete -c $program -n '__coffer_first_operand "" -c --clip -q --qrcode' -a '(__coffer_entries)'

# init
complete -c $program -n '__coffer_using init' -s p -l path -x -a '(__coffer_folders)' \
    -d 'Set the gpg ids of this subfolder only'
complete -c $program -n '__coffer_using init' -a '(__coffer_keys)' -d 'gpg id'

# ls, list, show
set -l show_like ls list show
complete -c $program -n "__coffer_using $show_like" -s c -l clip -d 'Copy line N (1) to the clipboard'
complete -c $program -n "__coffer_using $show_like" -s q -l qrcode -d 'Show line N (1) as a QR code'
complete -c $program -n '__coffer_using show' -s r -l revision -x -a '(__coffer_revisions)' \
    -d 'Show the entry as it was at a revision'
complete -c $program -n '__coffer_first_operand -r,--revision show ls list' -a '(__coffer_entries)'
complete -c $program -n '__coffer_using show' -l field -x -a 'password login url' \
    -d 'Show or copy one field (password is line 1)'
complete -c $program -n '__coffer_using show' -l json -d 'Print the entry as JSON'
complete -c $program -n "__coffer_using $show_like" -l flat -d 'One entry name a line'

# find, search, grep: free text.

# insert, add
complete -c $program -n '__coffer_using insert add' -s e -l echo -d 'Read one line and echo it'
complete -c $program -n '__coffer_using insert add' -s m -l multiline -d 'Read lines until end of file'
complete -c $program -n '__coffer_using insert add' -s f -l force -d 'Overwrite without asking'
complete -c $program -n '__coffer_using insert add' -l field -x -d 'Set a field KEY=VALUE of an entry'
complete -c $program -n '__coffer_first_operand "" insert add' -a '(__coffer_entries)'

# edit, history
complete -c $program -n '__coffer_first_operand "" edit history' -a '(__coffer_entries)'

# generate NAME [LENGTH]
complete -c $program -n '__coffer_using generate' -s n -l no-symbols -d 'Use letters and digits only'
complete -c $program -n '__coffer_using generate' -s c -l clip -d 'Copy the password to the clipboard'
complete -c $program -n '__coffer_using generate' -s q -l qrcode -d 'Show the password as a QR code'
complete -c $program -n '__coffer_using generate' -s i -l in-place -d 'Replace only the first line'
complete -c $program -n '__coffer_using generate' -s f -l force -d 'Overwrite without asking'
complete -c $program -n '__coffer_first_operand "" generate' -a '(__coffer_entries)'

# rm, remove, delete
complete -c $program -n '__coffer_using rm remove delete' -s r -l recursive -d 'Remove a folder and its contents'
complete -c $program -n '__coffer_using rm remove delete' -s f -l force -d 'Remove without asking'
complete -c $program -n '__coffer_using rm remove delete' -a '(__coffer_entries)'

# mv, rename, cp, copy
complete -c $program -n '__coffer_using mv rename cp copy' -s f -l force -d 'Overwrite without asking'
complete -c $program -n '__coffer_using mv rename cp copy' -a '(__coffer_entries)'

# restore --revision REV NAME
complete -c $program -n '__coffer_using restore' -l revision -x -a '(__coffer_revisions)' \
    -d 'The revision to bring back'
complete -c $program -n '__coffer_first_operand --revision restore' -a '(__coffer_entries)'

# git
set -l git_commands init status log show diff push pull fetch remote config commit reset revert rebase reflog
complete -c $program -n "__coffer_first_operand '' git" -a "$git_commands" -d 'git command'

# help COMMAND
for index in (seq 1 2 (count $commands))
    complete -c $program -n "__coffer_first_operand '' help" -a $commands[$index] -d $commands[(math $index + 1)]
end

# fsck [--fix]
complete -c $program -n '__coffer_using fsck' -l fix -d 'Repair what can be repaired'

# audit [--json] [--show-passwords] [--age DAYS] [--breached FILE] [--min-bits BITS] [subfolder]
complete -c $program -n '__coffer_using audit' -l json -d 'Print the findings as JSON'
complete -c $program -n '__coffer_using audit' -l show-passwords -d 'Print the passwords the findings are about'
complete -c $program -n '__coffer_using audit' -l age -x -d 'Days after which an unchanged password is old'
complete -c $program -n '__coffer_using audit' -l breached -r -F -d "Have I Been Pwned's SHA-1 list ordered by hash"
complete -c $program -n '__coffer_using audit' -l min-bits -x -d 'Estimated strength below which a password is weak'
complete -c $program -n '__coffer_first_operand --age,--breached,--min-bits audit' -a '(__coffer_folders)'

# the credential helpers' actions
complete -c $program -n '__coffer_using git-credential' -x -a 'get store erase'
complete -c $program -n '__coffer_using docker-credential' -x -a 'store get erase list version'

# otp [code] NAME, otp insert|add|append [options] [NAME], otp uri [options] NAME, otp validate URI
function __coffer_otp_subcommand
    set -l words (commandline -opc)
    test (count $words) -gt 2; and test $words[2] = otp; and contains -- $words[3] $argv
end
set -l otp_subcommands code show insert add append uri validate help version
complete -c $program -n "__coffer_first_operand '' otp" -a "$otp_subcommands" -d 'otp subcommand'
complete -c $program -n "__coffer_first_operand '' otp" -a '(__coffer_entries)'
complete -c $program -n "__coffer_first_operand '' otp" -s c -l clip -d 'Copy the code to the clipboard'
complete -c $program -n '__coffer_otp_subcommand code show' -s c -l clip -d 'Copy the code to the clipboard'
complete -c $program -n '__coffer_otp_subcommand code show uri' -a '(__coffer_entries)'
complete -c $program -n '__coffer_otp_subcommand uri' -s c -l clip -d 'Copy the URI to the clipboard'
complete -c $program -n '__coffer_otp_subcommand uri' -s q -l qrcode -d 'Show the URI as a QR code'
complete -c $program -n '__coffer_otp_subcommand insert add append' -s f -l force -d 'Overwrite without asking'
complete -c $program -n '__coffer_otp_subcommand insert add append' -s e -l echo -d 'Echo the input'
complete -c $program -n '__coffer_otp_subcommand insert add append' -s s -l secret \
    -d 'Read the secret instead of a URI'
complete -c $program -n '__coffer_otp_subcommand insert add append' -s i -l issuer -x -d 'The issuer, with --secret'
complete -c $program -n '__coffer_otp_subcommand insert add append' -s a -l account -x \
    -d 'The account, with --secret'
complete -c $program -n '__coffer_otp_subcommand insert add append' -a '(__coffer_entries)'

# setup [--name NAME] [--email EMAIL] [--no-passphrase] [--remote URL | --clone URL]
complete -c $program -n '__coffer_using setup' -l name -x -d 'The name for a new key'
complete -c $program -n '__coffer_using setup' -l email -x -d 'The e-mail address for a new key'
complete -c $program -n '__coffer_using setup' -l no-passphrase -d 'Make the new key without a passphrase'
complete -c $program -n '__coffer_using setup' -l remote -x -d 'Make the store a git repository and push it there'
complete -c $program -n '__coffer_using setup' -l clone -x -d 'Clone an existing store from this URL'

# recipients [add|rm|accept] [-p SUBFOLDER] [KEY...]
complete -c $program -n '__coffer_using recipients' -s p -l path -x -a '(__coffer_folders)' \
    -d 'The subfolder whose recipients to list or change'
complete -c $program -n "__coffer_first_operand -p,--path recipients" -a 'add rm accept' -d 'Change or accept the recipients'
complete -c $program -n '__coffer_using recipients; and not __coffer_first_operand -p,--path recipients' \
    -a '(__coffer_keys public)' -d 'gpg id'
# secret-service [--replace]
complete -c $program -n '__coffer_using secret-service' -l replace -d 'Take the bus name from the provider that owns it'

# clone URL [--path DIR]
complete -c $program -n '__coffer_using clone' -l path -r -a '(__fish_complete_directories)' \
    -d 'Clone into this folder instead of the store'
