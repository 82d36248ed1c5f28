package funding

import (
	"context"
	"fmt"

	"github.com/fundsource/fundsource/internal/core/idempotency"
)

// CreateKeyed is a creation of kind as the whole of an idempotent request
// under req: the claim on req's key, the source and the answer stored
// under the key commit together, and a second request with the key gets
// the stored answer (replayed), or the claim's refusal as err
// (request_in_progress, idempotency_key_reused). answer renders the
// response a creation gives, the source or the error; it is called once
// per path taken, before anything commits.
//
// The request is prepared once. A prepared creation is first written by
// one statement with the claim and its answer (Store.CreateSourceKeyed,
// which writes concurrent requests' creations together): one round trip
// for a new account. When that statement writes nothing (a rule refused
// the source, the account has a history its answer was not made with, the
// holder type was guessed wrong, an expired response is still stored
// under the key, or the batch failed), and when preparing refused, the
// request runs on the general path (Store.Idempotent): in its
// transaction insert tells which rule refused, or reads what the answer
// was made without and writes the source, and answer's response is
// stored with it. A 5xx answer is not kept: nothing is stored and it is
// returned all the same.
//
// CreateKeyed runs on the pool's store only: a request commits on its own.
func (s *Service) CreateKeyed(ctx context.Context, c Caller, kind Kind, in Input, req idempotency.Request, answer func(Source, error) idempotency.Response) (resp idempotency.Response, replayed bool, err error) {
	cr, refused := s.prepareKind(ctx, c, kind, in)
	if refused == nil {
		resp = answer(cr.Source, nil)
		created, replay, err := s.store.CreateSourceKeyed(ctx, cr.Source, cr.events, req, resp)
		switch {
		case err != nil:
			return idempotency.Response{}, false, fmt.Errorf("store source %s: %w", cr.Source.ID, err)
		case replay != nil:
			return *replay, true, nil
		case created:
			return resp, false, nil
		}
	}
	replay, err := s.store.Idempotent(ctx, req, func(tx Store) (idempotency.Response, bool) {
		src, err := Source{}, refused
		if err == nil {
			src, err = s.insert(ctx, tx, cr)
		}
		resp = answer(src, err)
		return resp, resp.Status < 500
	})
	switch {
	case err != nil:
		return idempotency.Response{}, false, fmt.Errorf("store a keyed creation: %w", err)
	case replay != nil:
		return *replay, true, nil
	}
	return resp, false, nil
}
