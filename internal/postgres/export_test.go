package postgres

// The one-row reads whose plans plan_test.go checks.
const (
	SelectSource   = selectSource
	SelectCustomer = selectCustomer
	SelectPayment  = selectPayment
	// CreateBatch is the batch of creations, whose reads it checks too.
	CreateBatch = createBatchSQL
)

// CreationBatches is how many batches of creations run at once.
const CreationBatches = creationBatches

// QueuedCreations is how many creations wait for a batch.
func QueuedCreations(db *DB) int { return db.creations.queued() }
