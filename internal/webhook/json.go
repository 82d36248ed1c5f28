package webhook

import (
	"encoding/json"
	"time"

	"github.com/fundsource/fundsource/internal/core/event"
)

// State is the delivery status shown to merchants: pending (not tried yet),
// retrying (tried, another attempt is scheduled), delivered, failed (every
// attempt failed) or canceled (the endpoint was deleted first).
func (d Delivery) State() string {
	if d.Status == Pending && d.Attempts > 0 {
		return "retrying"
	}
	return d.Status
}

// MarshalJSON writes the API view of a delivery.
func (d Delivery) MarshalJSON() ([]byte, error) {
	log := d.Log
	if log == nil {
		log = []Attempt{}
	}
	return json.Marshal(struct {
		ID            string     `json:"delivery_id"`
		Status        string     `json:"status"`
		AttemptCount  int        `json:"attempt_count"`
		NextAttemptAt *time.Time `json:"next_attempt_at"`
		LastError     *string    `json:"last_error"`
		CreatedAt     time.Time  `json:"created_at"`
		Attempts      []Attempt  `json:"attempts"`
	}{d.ID, d.State(), d.Attempts, d.NextAttemptAt, d.LastError, d.CreatedAt, log})
}

// MarshalJSON writes the event's envelope with a deliveries member.
func (e EventDetail) MarshalJSON() ([]byte, error) {
	ds := e.Deliveries
	if ds == nil {
		ds = []Delivery{}
	}
	return json.Marshal(struct {
		event.Envelope
		Deliveries []Delivery `json:"deliveries"`
	}{e.Event.Envelope(), ds})
}
