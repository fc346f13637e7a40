module twheel.dev/twheel

go 1.23

require golang.org/x/sys v0.30.0
