//go:build tools

// Package tools keeps the etcd server (the root package of go.etcd.io/etcd/server/v3
// is its main package) in this module's graph for `go mod tidy`. Never built.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
)
