#!/bin/sh
# Prints each argument on its own line (bind tests compare argv layouts),
# then exits with $EXIT_WITH if set.
for a in "$@"; do printf '%s\n' "$a"; done
exit "${EXIT_WITH:-0}"
