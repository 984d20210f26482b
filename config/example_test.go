package config_test

import (
	"errors"
	"fmt"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

func Example() {
	src := `
[mcp.servers.k8s]
cmd = "kubectl-mcp --read-only"
prefix = "k8s"

[mcp.servers.k8s.scratchpad]
"*" = 8000
"list_*" = { min_tokens = 2000 }
list_pods = 1000
`
	cfg, err := config.Parse("scratchpad.toml", []byte(src), nil)
	if err != nil {
		panic(err)
	}
	s := &cfg.Servers[0]
	for _, tool := range []string{"list_pods", "list_nodes", "describe_pod"} {
		n, _ := s.Threshold(tool)
		fmt.Println(s.ExposedName(tool), n)
	}
	// Output:
	// k8s__list_pods 1000
	// k8s__list_nodes 2000
	// k8s__describe_pod 8000
}

func ExampleLoad_errors() {
	src := `
[mcp.servers.k8s]
cmd = "kubectl-mcp"
tiemout = "30s"

[mcp.servers.k8s.scratchpad]
"list_[pods" = 500
`
	_, err := config.Parse("scratchpad.toml", []byte(src), nil)
	fmt.Println(err)
	fmt.Println(errors.Is(err, config.ErrInvalid))
	// Output:
	// scratchpad.toml:4:1: mcp.servers.k8s.tiemout: unknown key "tiemout" (did you mean "timeout"?)
	// scratchpad.toml:7:7: mcp.servers.k8s.scratchpad."list_[pods": invalid pattern: unclosed class '['
	// true
}

func ExampleCompilePattern() {
	p, err := config.CompilePattern("{get,list}_*")
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Match("list_pods"), p.Match("get_logs"), p.Match("delete_pod"))
	_, err = config.CompilePattern("list pods")
	fmt.Println(err)
	// Output:
	// true true false
	// invalid pattern "list pods" at offset 4: character ' ' not allowed (use a-z A-Z 0-9 _ - . / and * ? [...] {...})
}
