# A Tk app that owns one selection by name (CLIPBOARD_MANAGER, say) and answers nothing.
# Usage: DISPLAY=:N wish tk-own.tcl SELECTION
# Prints READY once it owns it, and runs until killed.
wm withdraw .
selection own -selection [lindex $argv 0] .
puts READY
flush stdout
