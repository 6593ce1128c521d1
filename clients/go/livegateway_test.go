package memgate_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// liveGateways is what clients/testkit/live_gateway.py prints: two real gateways (`python -m
// gateway.cli serve` from this checkout), one plaintext with API keys and a low per-agent read
// bound, one mTLS.
type liveGateways struct {
	Plain         string            `json:"plain"`
	MTLS          string            `json:"mtls"`
	Keys          map[string]string `json:"keys"`
	Master        string            `json:"master"`
	ReadsPerAgent int               `json:"reads_per_agent"`
	RetryAfterMs  int               `json:"retry_after_ms"`
	CA            string            `json:"ca"`
	ClientCert    string            `json:"client_cert"`
	ClientKey     string            `json:"client_key"`
	TLSAgent      string            `json:"tls_agent"`
}

var gw liveGateways

// repoRoot: this file is clients/go/livegateway_test.go.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func TestMain(m *testing.M) {
	os.Exit(runWithGateways(m))
}

func runWithGateways(m *testing.M) int {
	root := repoRoot()
	python := os.Getenv("PYTHON")
	if python == "" {
		python = "python"
	}
	cmd := exec.Command(python, filepath.Join(root, "clients", "testkit", "live_gateway.py"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PYTHONPATH="+root)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		panic(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		panic(err)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot start live_gateway.py:", err)
		return 1
	}
	defer func() {
		_ = stdin.Close() // the harness stops the gateways when its stdin closes
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		fmt.Fprintln(os.Stderr, "live_gateway.py ended before it was ready:", err)
		return 1
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	if err := json.Unmarshal(line, &gw); err != nil {
		fmt.Fprintln(os.Stderr, "live_gateway.py:", err)
		return 1
	}
	return m.Run()
}
