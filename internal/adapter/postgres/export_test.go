package postgres

import (
	"reflect"

	"github.com/jmoiron/sqlx"
)

// The one-row reads whose plans plan_test.go checks.
const (
	SelectSource   = selectSource
	SourceAnswer   = selectSourceAnswer
	SelectCustomer = selectCustomer
	SelectPayment  = selectPayment
	// ListSources is a customer's page of sources, which reads the
	// histories of those whose kept check does not hold.
	ListSources = listSources
	// SelectAccountFacts is the account check's read of an account's
	// history.
	SelectAccountFacts = selectAccountFacts
	// ListRequests is the request log's newest-first page.
	ListRequests = listRequests
	// PageBatches is a chunk of the request log's batches.
	PageBatches = pageBatches
)

// BatchSession is the session settings of the creation batch writers.
var BatchSession = batchSession

// CreateSources is the creation statement, whose reads it checks too.
var CreateSources = createSources

// CreationBatches is how many batches of creations run at once.
const CreationBatches = creationBatches

// CreationBatchMax is the most creations one batch holds.
const CreationBatchMax = creationBatchMax

// QueuedCreations is how many creations wait for a batch.
func QueuedCreations(db *DB) int { return db.creations.queued() }

// Pool is db's pool, for tests that run raw SQL beside the store.
func (db *DB) Pool() *sqlx.DB { return db.x }

// BatchPool is the creation batch writers' pool.
func (db *DB) BatchPool() *sqlx.DB { return db.batchX }

// Translate is the driver-error translation every store method applies.
var Translate = translate

// SourceScans are the source's reads by their own scans (Source's and
// SourceAnswer's): each statement with the db tags of the fields it scans
// into, in scan order.
func SourceScans() map[string][]string {
	return map[string][]string{
		selectSource:       scanTags((*sourceRow).fieldsOfSource),
		selectSourceAnswer: scanTags((*sourceRow).fieldsOfAnswer),
	}
}

func scanTags(fields func(*sourceRow) []any) []string {
	var r sourceRow
	byAddr := map[uintptr]string{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		for i := range v.NumField() {
			f, sf := v.Field(i), v.Type().Field(i)
			if sf.Anonymous {
				walk(f)
				continue
			}
			byAddr[f.Addr().Pointer()] = sf.Tag.Get("db")
		}
	}
	walk(reflect.ValueOf(&r).Elem())
	var tags []string
	for _, p := range fields(&r) {
		tags = append(tags, byAddr[reflect.ValueOf(p).Pointer()])
	}
	return tags
}
