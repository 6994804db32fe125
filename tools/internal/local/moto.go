package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"runtime"
	"sync"
	"time"
)

// MotoCommand is the program StartMoto runs: the server mode of moto, the AWS API
// mock maintained by getmoto (pip package moto with its server extra; this project
// uses 5.2.1). MotoInstall installs it.
const (
	MotoCommand = "moto_server"
	MotoInstall = `pip install "moto[server]==5.2.1"`
)

// ErrNoMoto is returned by StartMoto when MotoCommand is not on PATH.
var ErrNoMoto = errors.New(MotoCommand + " is not installed (" + MotoInstall + ")")

// motoStartTimeout bounds how long StartMoto waits for moto_server to listen; it
// usually does within 1 s (Python imports), longer on a loaded machine.
const motoStartTimeout = time.Minute

// motoListening matches the line moto_server's web server (werkzeug) prints once it
// listens: " * Running on http://127.0.0.1:PORT".
var motoListening = regexp.MustCompile(`Running on (http://[^\s]+)`)

// MotoServer is a moto_server process serving the AWS APIs the stack uses (DynamoDB,
// SQS, SNS, KMS, Secrets Manager, among others) on one HTTP endpoint, every
// service in one account, AccountID (MOTO_ACCOUNT_ID), so that its ARNs and queue
// URLs name the same account as the local ones; its region is the one a request is
// signed for (Region for the local clients). Its state lives in that process and
// is lost on Close; Reset forgets it without a restart. On Linux the process is
// killed when this one dies, however it dies (PR_SET_PDEATHSIG).
//
// moto runs each request on a thread of its own and its DynamoDB is not safe for
// concurrent requests: StartDynamoDB forwards to it one request at a time.
type MotoServer struct {
	url    string
	cmd    *exec.Cmd
	output *tail         // the last of what the process printed
	exited chan struct{} // closed once the process has ended
	close  func() error  // kills the process, run once
}

// StartMoto runs moto_server listening on addr ("127.0.0.1:0": a free port) and
// returns once it listens, or fails with ErrNoMoto when it is not installed, with
// the process's last output when it ends or does not listen within a minute, or
// with ctx's error. ctx bounds only the start. Call Close to stop it. The process
// inherits this process's environment (as os/exec does), plus MOTO_ACCOUNT_ID.
func StartMoto(ctx context.Context, addr string) (*MotoServer, error) {
	path, err := exec.LookPath(MotoCommand)
	if err != nil {
		return nil, ErrNoMoto
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("start %s on %s: %w", MotoCommand, addr, err)
	}
	cmd := exec.Command(path, "-H", host, "-p", port)
	cmd.Env = append(cmd.Environ(), "MOTO_ACCOUNT_ID="+AccountID)
	cmd.SysProcAttr = killWithParent()
	listening := make(chan string, 1)
	m := &MotoServer{cmd: cmd, output: &tail{listening: listening}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = m.output, m.output
	if err := m.start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", MotoCommand, err)
	}
	m.close = sync.OnceValue(func() error {
		m.cmd.Process.Kill()
		<-m.exited
		return nil
	})
	timer := time.NewTimer(motoStartTimeout)
	defer timer.Stop()
	select {
	case m.url = <-listening:
		return m, nil
	case <-m.exited:
		err = fmt.Errorf("%s ended before it listened: %s", MotoCommand, m.output)
	case <-timer.C:
		err = fmt.Errorf("%s did not listen within %v: %s", MotoCommand, motoStartTimeout, m.output)
	case <-ctx.Done():
		err = ctx.Err()
	}
	m.Close()
	return nil, err
}

// start starts the process from a goroutine locked to its OS thread until the
// process has ended and its output is read: the kernel sends the parent-death signal when the thread that
// started a process ends, not the whole process, and Go ends a thread whose locked
// goroutine returns.
func (m *MotoServer) start() error {
	started := make(chan error)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := m.cmd.Start()
		started <- err
		if err == nil {
			m.cmd.Wait()
			close(m.exited)
		}
	}()
	return <-started
}

// URL returns the endpoint, "http://host:port", for every service's client (the
// SDK's BaseEndpoint, AWS_ENDPOINT_URL, `aws --endpoint-url`).
func (m *MotoServer) URL() string { return m.url }

// Reset forgets every resource of every service (moto's POST /moto-api/reset), as a
// new moto_server would start, in a few milliseconds instead of a second.
func (m *MotoServer) Reset(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.url+"/moto-api/reset", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("reset %s: %w", MotoCommand, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("reset %s: %s", MotoCommand, resp.Status)
	}
	return nil
}

// Output returns the last lines moto_server printed (at most about 64 KiB): its
// request log and the traceback of an internal error.
func (m *MotoServer) Output() string { return m.output.String() }

// Close kills the process and waits for it to end. Calling it again returns the
// first call's result.
func (m *MotoServer) Close() error { return m.close() }

// tail keeps the last lines moto_server prints (its request log, and a traceback
// on an internal error), about tailBytes of them, and sends the URL it listens on
// to listening, once.
type tail struct {
	mu        sync.Mutex
	partial   []byte // the last line, while it has no end yet
	lines     []string
	size      int
	listening chan<- string // nil once sent
}

const tailBytes = 64 << 10

// Write splits p into lines.
func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		t.add(string(t.partial[:i]))
		t.partial = t.partial[i+1:]
	}
}

// add keeps line; t.mu is held.
func (t *tail) add(line string) {
	if sub := motoListening.FindStringSubmatch(line); sub != nil && t.listening != nil {
		t.listening <- sub[1]
		t.listening = nil
	}
	t.lines = append(t.lines, line)
	t.size += len(line) + 1
	for t.size > tailBytes && len(t.lines) > 1 {
		t.size -= len(t.lines[0]) + 1
		t.lines = t.lines[1:]
	}
}

// String returns the lines kept, one per line.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []byte
	for _, l := range t.lines {
		out = append(append(out, l...), '\n')
	}
	return string(out)
}
