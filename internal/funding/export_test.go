package funding

// SetDraw makes s draw micro-deposit amounts from draw, so a test can
// choose them.
func (s *Service) SetDraw(draw func() int) { s.draw = draw }

// AmountsAAD is the associated data an initiation's amounts are sealed with.
func AmountsAAD(sourceID string, seq int) []byte { return amountsAAD(sourceID, seq) }
