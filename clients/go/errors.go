package memgate

import (
	"errors"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// RetryAfterHeader is the trailing metadata the gateway sends with RESOURCE_EXHAUSTED: how many
// milliseconds to wait before retrying.
const RetryAfterHeader = "retry-after-ms"

// The kinds of error the gateway answers with (docs/CLIENTS.md "Errors"); test with errors.Is,
// e.g. errors.Is(err, memgate.ErrOverloaded). Each call's error is an *Error.
var (
	ErrInvalidArgument    = errors.New("invalid argument")    // INVALID_ARGUMENT, OUT_OF_RANGE
	ErrNotFound           = errors.New("not found")           // NOT_FOUND
	ErrPermissionDenied   = errors.New("permission denied")   // PERMISSION_DENIED
	ErrUnauthenticated    = errors.New("unauthenticated")     // UNAUTHENTICATED
	ErrConflict           = errors.New("conflict")            // ABORTED, ALREADY_EXISTS
	ErrFailedPrecondition = errors.New("failed precondition") // FAILED_PRECONDITION
	// ErrUnavailable (UNAVAILABLE, DEADLINE_EXCEEDED): safe to retry with the same key.
	ErrUnavailable = errors.New("unavailable")
	// ErrOverloaded (RESOURCE_EXHAUSTED): refused before anything was done; see Error.RetryAfterMs.
	ErrOverloaded    = errors.New("overloaded")
	ErrUnimplemented = errors.New("unimplemented") // UNIMPLEMENTED
	ErrGateway       = errors.New("gateway error") // any other status
)

var kinds = map[codes.Code]error{
	codes.InvalidArgument:    ErrInvalidArgument,
	codes.OutOfRange:         ErrInvalidArgument,
	codes.NotFound:           ErrNotFound,
	codes.PermissionDenied:   ErrPermissionDenied,
	codes.Unauthenticated:    ErrUnauthenticated,
	codes.Aborted:            ErrConflict,
	codes.AlreadyExists:      ErrConflict,
	codes.FailedPrecondition: ErrFailedPrecondition,
	codes.Unavailable:        ErrUnavailable,
	codes.DeadlineExceeded:   ErrUnavailable,
	codes.ResourceExhausted:  ErrOverloaded,
	codes.Unimplemented:      ErrUnimplemented,
}

// Error is a call the gateway refused or could not serve.
type Error struct {
	Code    codes.Code // the gRPC status
	Message string
	// RetryAfterMs is the gateway's retry-after-ms hint of an overloaded answer (0: none).
	RetryAfterMs int
	kind         error
}

func (e *Error) Error() string { return "memgate: " + e.Code.String() + ": " + e.Message }

// Is makes errors.Is(err, ErrOverloaded) (and the other kinds) work.
func (e *Error) Is(target error) bool { return target == e.kind }

// Unwrap gives the kind.
func (e *Error) Unwrap() error { return e.kind }

// typed turns what a call returned into an *Error; trailer is the call's trailing metadata.
func typed(err error, trailer map[string][]string) *Error {
	var already *Error
	if errors.As(err, &already) {
		return already
	}
	st := status.Convert(err)
	kind, ok := kinds[st.Code()]
	if !ok {
		kind = ErrGateway
	}
	out := &Error{Code: st.Code(), Message: st.Message(), kind: kind}
	if st.Code() == codes.ResourceExhausted {
		for _, v := range trailer[RetryAfterHeader] {
			if ms, err := strconv.Atoi(v); err == nil && ms > 0 {
				out.RetryAfterMs = ms
			}
		}
	}
	return out
}
