package ach

import (
	"context"
	"time"
)

// FileSummary is a file as `fundsource ach files` lists it.
type FileSummary struct {
	ID   string `json:"file_id"`
	Name string `json:"name"`
	// Window is the origination window that built it (HH:MM US Eastern);
	// nil for a file built outside a window.
	Window      *string    `json:"window"`
	Status      string     `json:"status"` // StatusBuilt, StatusDelivered, StatusFailed, StatusSettled
	Transport   *string    `json:"transport"`
	Entries     int        `json:"entry_count"`
	DebitCents  *int64     `json:"debit_total_cents"`  // nil until first built for delivery
	CreditCents *int64     `json:"credit_total_cents"` // likewise
	Attempts    int        `json:"attempts"`           // failed deliveries
	LastError   *string    `json:"last_error"`
	CreatedAt   time.Time  `json:"created_at"`
	DeliveredAt *time.Time `json:"delivered_at"`
	SettledAt   *time.Time `json:"settled_at"`
}

// Files lists the newest files first (at most limit) and the newest
// inbound files, with the statuses of their life; the statuses releases
// before them wrote read as theirs now.
func (o *Originator) Files(ctx context.Context, limit int) ([]FileSummary, []Inbound, error) {
	files, err := o.store.ACHFiles(ctx, limit)
	if err != nil {
		return nil, nil, err
	}
	for i, f := range files {
		switch f.Status {
		case statusBuilding:
			files[i].Status = StatusBuilt
		case statusWritten:
			files[i].Status = StatusDelivered
			if f.Transport == nil {
				folder := TransportFolder
				files[i].Transport = &folder
			}
		}
	}
	inbound, err := o.store.InboundFiles(ctx, limit)
	return files, inbound, err
}
