package postgres

import "sync"

// batches runs the work of concurrent callers in shared statements: each
// caller adds its item and waits on a channel of its own; up to limit
// goroutines at a time each take what is queued (at most max items) and
// run it as one batch, until the queue is empty. A lone item is a batch of
// one at once: nothing waits for company, and under load the batches grow
// by themselves. Items with the same key never share a batch (the later
// one waits for the next), in queue order.
type batches[T any] struct {
	limit, max int
	key        func(T) string
	run        func(batch []T)

	mu      sync.Mutex
	queue   []T
	running int // goroutines taking from the queue
}

func newBatches[T any](limit, max int, key func(T) string, run func(batch []T)) *batches[T] {
	return &batches[T]{limit: limit, max: max, key: key, run: run}
}

// add queues item and starts a goroutine to take batches when fewer than
// limit run.
func (b *batches[T]) add(item T) {
	b.mu.Lock()
	b.queue = append(b.queue, item)
	start := b.running < b.limit
	if start {
		b.running++
	}
	b.mu.Unlock()
	if start {
		go b.loop()
	}
}

func (b *batches[T]) loop() {
	for {
		batch := b.next()
		if batch == nil {
			return
		}
		b.run(batch)
	}
}

// next takes the next batch off the queue, nil (and one fewer running)
// when the queue is empty.
func (b *batches[T]) next() []T {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) == 0 {
		b.running--
		return nil
	}
	var batch, rest []T
	keys := make(map[string]bool, len(b.queue))
	for _, item := range b.queue {
		k := b.key(item)
		if len(batch) == b.max || keys[k] {
			rest = append(rest, item)
			continue
		}
		keys[k] = true
		batch = append(batch, item)
	}
	b.queue = rest
	return batch
}

// queued is how many items wait for a batch.
func (b *batches[T]) queued() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}
