package providersim

import (
	"strings"
)

// Every account of the simulator belongs to Plaid's sandbox owner, with
// Plaid's sandbox email, phone and address. /processor/identity/match
// scores a customer against that owner in bands a test can aim at
// (documented in docs/api.md, "Sandbox guide"):
//
//	legal name "Alberta Bobbeth Charleson"        100 (match)
//	"Alberta Charleson" (first and last name)      90 (match)
//	one of the names, like "Alberta Smith"         60 (partial)
//	anything else                                  20 (mismatch)
//
// and the email accountholder0@example.com (any case) 100, any other 0.
const (
	OwnerName  = "Alberta Bobbeth Charleson"
	OwnerEmail = "accountholder0@example.com"
)

func ownersJSON() []any {
	return []any{map[string]any{
		"names": []string{OwnerName},
		"emails": []any{
			map[string]any{"data": OwnerEmail, "primary": true, "type": "primary"},
			map[string]any{"data": "accountholder1@example.com", "primary": false, "type": "secondary"},
		},
		"phone_numbers": []any{map[string]any{"data": "1112223333", "primary": false, "type": "home"}},
		"addresses": []any{map[string]any{"primary": true, "data": map[string]any{
			"city": "Malakoff", "region": "NY", "street": "2992 Cameron Road", "postal_code": "14236", "country": "US",
		}}},
	}}
}

func (s *Sim) processorIdentityGet(client string, body map[string]any) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pt, aerr := s.processorToken(client, body)
	if aerr != nil {
		return nil, aerr
	}
	acct := accountJSON(pt.account)
	acct["owners"] = ownersJSON()
	return map[string]any{"account": acct}, nil
}

func (s *Sim) processorIdentityMatch(client string, body map[string]any) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pt, aerr := s.processorToken(client, body)
	if aerr != nil {
		return nil, aerr
	}
	user, _ := body["user"].(map[string]any)
	if user != nil {
		for k := range user {
			switch k {
			case "legal_name", "email_address", "phone_number", "address":
			default:
				return nil, invalidField("user.%s is not a field of the request", k)
			}
		}
	}
	acct := accountJSON(pt.account)
	if name, _ := user["legal_name"].(string); name != "" {
		score, partial := nameScore(name)
		acct["legal_name"] = map[string]any{"score": score, "is_first_name_or_last_name_match": partial,
			"is_nickname_match": false, "is_business_name_detected": false}
	}
	if email, _ := user["email_address"].(string); email != "" {
		score := 0
		if strings.EqualFold(strings.TrimSpace(email), OwnerEmail) {
			score = 100
		}
		acct["email_address"] = map[string]any{"score": score}
	}
	return map[string]any{"account": acct}, nil
}

// nameScore scores a legal name against OwnerName, and says whether the
// first or the last name matched.
func nameScore(name string) (int, bool) {
	owner := strings.Fields(strings.ToLower(OwnerName))
	got := strings.Fields(strings.ToLower(name))
	if strings.Join(got, " ") == strings.Join(owner, " ") {
		return 100, true
	}
	first, last := len(got) > 0 && got[0] == owner[0], len(got) > 1 && got[len(got)-1] == owner[len(owner)-1]
	switch {
	case first && last:
		return 90, true
	case first || last:
		return 60, true
	}
	return 20, false
}
