module twheel.dev/bench

go 1.23

require (
	github.com/zeromicro/go-zero v1.9.2
	golang.org/x/sys v0.30.0
	twheel.dev/twheel v1.0.0
)

require (
	github.com/fatih/color v1.18.0 // indirect
	github.com/mattn/go-colorable v0.1.13 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/spaolacci/murmur3 v1.1.0 // indirect
	go.opentelemetry.io/otel v1.24.0 // indirect
	go.opentelemetry.io/otel/trace v1.24.0 // indirect
	go.uber.org/automaxprocs v1.6.0 // indirect
)

replace twheel.dev/twheel => ../
