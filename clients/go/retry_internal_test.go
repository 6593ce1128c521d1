package memgate

import (
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

func statusError(c codes.Code, trailer map[string]string) *Error {
	return typed(status.Error(c, "test"), metadata.New(trailer))
}

func TestTypedErrorsFollowTheContract(t *testing.T) {
	cases := map[codes.Code]error{
		codes.InvalidArgument: ErrInvalidArgument, codes.OutOfRange: ErrInvalidArgument,
		codes.NotFound: ErrNotFound, codes.PermissionDenied: ErrPermissionDenied,
		codes.Unauthenticated: ErrUnauthenticated, codes.Aborted: ErrConflict,
		codes.AlreadyExists: ErrConflict, codes.FailedPrecondition: ErrFailedPrecondition,
		codes.Unavailable: ErrUnavailable, codes.DeadlineExceeded: ErrUnavailable,
		codes.ResourceExhausted: ErrOverloaded, codes.Unimplemented: ErrUnimplemented,
		codes.Internal: ErrGateway,
	}
	for code, kind := range cases {
		err := statusError(code, nil)
		if !errors.Is(err, kind) || err.Code != code {
			t.Errorf("%v: %v is not %v", code, err, kind)
		}
	}
	if e := statusError(codes.ResourceExhausted, map[string]string{RetryAfterHeader: "250"}); e.RetryAfterMs != 250 {
		t.Errorf("retry-after-ms 250 read as %d", e.RetryAfterMs)
	}
}

func TestRetryPolicy(t *testing.T) {
	p := DefaultRetryPolicy()
	over := statusError(codes.ResourceExhausted, map[string]string{RetryAfterHeader: "300"})
	for attempt := range 8 {
		d, ok := p.AfterFailure(over, attempt)
		if !ok || d < 300*time.Millisecond || d > 400*time.Millisecond {
			t.Fatalf("overload attempt %d: %v %v (want the hint plus at most 100ms of jitter)", attempt, d, ok)
		}
	}
	if _, ok := p.AfterFailure(over, 8); ok {
		t.Fatal("overload retried past its budget")
	}
	huge := statusError(codes.ResourceExhausted, map[string]string{RetryAfterHeader: "60000"})
	if d, _ := p.AfterFailure(huge, 0); d != p.OverloadCap {
		t.Fatalf("an overload wait is capped: %v", d)
	}
	if _, ok := (RetryPolicy{}).AfterFailure(over, 0); ok {
		t.Fatal("Retries 0 must turn overload retries off too")
	}
	down := statusError(codes.Unavailable, nil)
	for attempt, want := range []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond} {
		d, ok := p.AfterFailure(down, attempt)
		if !ok || d < want/2 || d > want {
			t.Fatalf("unavailable attempt %d: %v %v, want in [%v, %v]", attempt, d, ok, want/2, want)
		}
	}
	if _, ok := p.AfterFailure(down, 3); ok {
		t.Fatal("unavailable retried past Retries")
	}
	p.Replicas = 3
	for attempt := range 2 {
		if d, ok := p.AfterFailure(down, attempt); !ok || d != 0 {
			t.Fatalf("several gateways: retry %d should go at once, got %v", attempt, d)
		}
	}
	if _, ok := p.AfterFailure(statusError(codes.InvalidArgument, nil), 0); ok {
		t.Fatal("INVALID_ARGUMENT retried")
	}
}
