// go-alloc.go - a Go program for the memory-limit tests (issue 22): the Go runtime
// reserves address space for its heap arenas beyond what it uses.  It allocates and
// touches N MiB (the argument), keeps them live, and prints "go: ok N MiB".
// Built by the tests: CGO_ENABLED=0 go build (a static binary).
package main

import (
	"fmt"
	"os"
	"strconv"
)

func main() {
	n, err := strconv.Atoi(os.Args[1])
	if err != nil || n < 0 {
		fmt.Fprintln(os.Stderr, "usage: go-alloc MIB")
		os.Exit(2)
	}
	blocks := make([][]byte, n)
	for i := range blocks {
		blocks[i] = make([]byte, 1<<20)
		for j := 0; j < len(blocks[i]); j += 4096 {
			blocks[i][j] = 1
		}
	}
	sum := 0
	for i := range blocks {
		sum += int(blocks[i][0])
	}
	fmt.Printf("go: ok %d MiB\n", sum)
}
