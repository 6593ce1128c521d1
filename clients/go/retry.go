package memgate

import (
	"errors"
	"math/rand/v2"
	"time"
)

// RetryPolicy says when a failed call goes again (docs/CLIENTS.md "Retries"), as the Python
// client's RetryPolicy: the same request is sent again, so a write keeps its idempotency key
// and is stored once.
type RetryPolicy struct {
	// Retries of UNAVAILABLE / DEADLINE_EXCEEDED (per attempt); 0 turns every retry off.
	Retries int
	// Base is the first back-off, doubled per attempt up to Cap.
	Base, Cap time.Duration
	// OverloadRetries of RESOURCE_EXHAUSTED, each after the gateway's retry-after-ms (at most
	// OverloadCap).
	OverloadRetries int
	OverloadCap     time.Duration
	// Replicas: with several gateways the first Replicas-1 retries go at once (to the next).
	Replicas int
}

// DefaultRetryPolicy is the policy of a client whose Options leave it unset.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{Retries: 3, Base: 200 * time.Millisecond, Cap: 2 * time.Second,
		OverloadRetries: 8, OverloadCap: 5 * time.Second, Replicas: 1}
}

// AfterFailure is how long to wait before attempt attempt+1 (attempts count from 0), and false
// when the call must not (or may no longer) be retried.
func (p RetryPolicy) AfterFailure(err *Error, attempt int) (time.Duration, bool) {
	overloadBudget := p.OverloadRetries
	if p.Retries == 0 {
		overloadBudget = 0
	}
	if errors.Is(err, ErrOverloaded) && attempt < overloadBudget {
		hint := time.Duration(err.RetryAfterMs) * time.Millisecond
		if hint <= 0 {
			hint = p.Base
		}
		jitter := time.Duration(rand.Int64N(int64(min(hint, p.Base)/2) + 1)) // a burst does not come back as one
		return min(hint+jitter, p.OverloadCap), true
	}
	if !errors.Is(err, ErrUnavailable) || attempt >= p.Retries {
		return 0, false
	}
	if p.Replicas > 1 && attempt < p.Replicas-1 {
		return 0, true
	}
	backoff := min(p.Base<<attempt, p.Cap)
	return backoff/2 + time.Duration(rand.Int64N(int64(backoff/2)+1)), true
}
