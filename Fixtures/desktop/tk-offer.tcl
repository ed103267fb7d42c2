# A Tk app that owns CLIPBOARD with several types, the way Tk apps (and password managers) offer
# them. Usage: DISPLAY=:N wish tk-offer.tcl TYPE VALUE [TYPE VALUE ...]
# Each TYPE is an atom name (UTF8_STRING, text/html, x-kde-passwordManagerHint, ...). Prints READY
# once it owns the clipboard, and runs until killed.
wm withdraw .
clipboard clear
foreach {type value} $argv {
    clipboard append -type $type -- $value
}
puts READY
flush stdout
