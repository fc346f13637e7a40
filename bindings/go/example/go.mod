module example.com/fleet

go 1.23

require twheel.dev/twheel v1.0.0

require golang.org/x/sys v0.30.0 // indirect

// Builds against the tree's package; `make -C bindings/go proxy-test`
// drops this line and takes v1.0.0 from the local module proxy instead.
replace twheel.dev/twheel => ../
