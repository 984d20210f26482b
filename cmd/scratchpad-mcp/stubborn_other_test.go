//go:build !unix

package main

func maybeStubborn() {}
