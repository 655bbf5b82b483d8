//go:build tools

// Package tools keeps the commands that build-control-plane.sh builds in this
// module's graph, so that `go mod tidy` keeps their dependencies. Never built.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
