module twheel.dev/bench/scenarios

go 1.24.0

require (
	github.com/zeromicro/go-zero v1.10.3
	twheel.dev/twheel v1.0.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/fatih/color v1.18.0 // indirect
	github.com/mattn/go-colorable v0.1.13 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/spaolacci/murmur3 v1.1.0 // indirect
	go.opentelemetry.io/otel v1.40.0 // indirect
	go.opentelemetry.io/otel/trace v1.40.0 // indirect
	go.uber.org/automaxprocs v1.6.0 // indirect
	golang.org/x/sys v0.41.0 // indirect
)

// The tree's binding, not a published module: the rows are of this tree.
replace twheel.dev/twheel => ../../../bindings/go
