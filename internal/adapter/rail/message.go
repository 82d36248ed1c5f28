package rail

import (
	"encoding/xml"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/moov-io/iso20022/pkg/common"
	"github.com/moov-io/iso20022/pkg/pacs_v08"
	"github.com/moov-io/iso20022/pkg/pacs_v10"

	"github.com/fundsource/fundsource/internal/funding"
)

// Message namespaces: the versions RTP and FedNow exchange.
const (
	NamespaceCredit = "urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"
	NamespaceStatus = "urn:iso:std:iso:20022:tech:xsd:pacs.002.001.10"
	// ContentType is the media type of both messages on the wire.
	ContentType = "application/xml"
)

// Transaction statuses of a pacs.002.
const (
	StatusSettled  = "ACSC" // settled: the creditor's account is credited
	StatusAccepted = "ACCP" // accepted for settlement
	StatusRejected = "RJCT"
)

// clearing system id of ABA routing numbers in ClrSysMmbId.
const abaClearing = "USABA"

type creditDocument struct {
	XMLName xml.Name                                 `xml:"urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08 Document"`
	Message pacs_v08.FIToFICustomerCreditTransferV08 `xml:"FIToFICstmrCdtTrf"`
}

type statusDocument struct {
	XMLName xml.Name                              `xml:"urn:iso:std:iso:20022:tech:xsd:pacs.002.001.10 Document"`
	Message pacs_v10.FIToFIPaymentStatusReportV10 `xml:"FIToFIPmtStsRpt"`
}

// Party is the originator of credits: its name and its bank's routing
// number.
type Party struct {
	Name          string
	RoutingNumber string
}

func agent(routing string) pacs_v08.BranchAndFinancialInstitutionIdentification6 {
	return pacs_v08.BranchAndFinancialInstitutionIdentification6{FinInstnId: pacs_v08.FinancialInstitutionIdentification18{
		ClrSysMmbId: &pacs_v08.ClearingSystemMemberIdentification2{
			ClrSysId: &pacs_v08.ClearingSystemIdentification2Choice{Cd: abaClearing},
			MmbId:    common.Max35Text(routing),
		},
	}}
}

// EncodeCredit writes c as a pacs.008 from debtor, created at now.
func EncodeCredit(c funding.InstantCredit, debtor Party, now time.Time) ([]byte, error) {
	name := common.Max140Text(debtor.Name)
	amount := float64(c.AmountCents) / 100
	sttl := common.ISODate(now)
	doc := creditDocument{Message: pacs_v08.FIToFICustomerCreditTransferV08{
		GrpHdr: pacs_v08.GroupHeader93{
			MsgId: common.Max35Text(c.MessageID), CreDtTm: common.ISODateTime(now.UTC()), NbOfTxs: "1",
			SttlmInf: pacs_v08.SettlementInstruction7{SttlmMtd: "CLRG"},
		},
		CdtTrfTxInf: []pacs_v08.CreditTransferTransaction39{{
			PmtId:          pacs_v08.PaymentIdentification7{EndToEndId: common.Max35Text(c.MessageID), TxId: ptr(common.Max35Text(c.MessageID))},
			IntrBkSttlmAmt: pacs_v08.ActiveCurrencyAndAmount{Value: amount, Ccy: "USD"},
			IntrBkSttlmDt:  &sttl,
			ChrgBr:         "SLEV",
			Dbtr:           pacs_v08.PartyIdentification135{Nm: &name},
			DbtrAgt:        agent(debtor.RoutingNumber),
			CdtrAgt:        agent(c.RoutingNumber),
			Cdtr:           pacs_v08.PartyIdentification135{},
			CdtrAcct: &pacs_v08.CashAccount38{
				Id: pacs_v08.AccountIdentification4Choice{Othr: pacs_v08.GenericAccountIdentification1{Id: common.Max34Text(c.AccountNumber)}},
				Tp: &pacs_v08.CashAccountType2Choice{Cd: ptr(accountTypeCode(c.AccountType))},
			},
			RmtInf: &pacs_v08.RemittanceInformation16{Ustrd: []common.Max140Text{common.Max140Text(c.Remittance)}},
		}},
	}}
	return xml.Marshal(doc)
}

// accountTypeCode is the ISO 20022 cash account type: CACC (current) for
// checking, SVGS for savings.
func accountTypeCode(t string) pacs_v08.ExternalCashAccountType1Code {
	if t == funding.Savings {
		return "SVGS"
	}
	return "CACC"
}

// DecodeCredit reads a pacs.008 holding one credit; the debtor is not
// returned (the simulator does not need it).
func DecodeCredit(body []byte) (funding.InstantCredit, error) {
	var doc creditDocument
	if err := xml.Unmarshal(body, &doc); err != nil {
		return funding.InstantCredit{}, fmt.Errorf("read pacs.008: %w", err)
	}
	m := doc.Message
	if m.GrpHdr.MsgId == "" || len(m.CdtTrfTxInf) != 1 {
		return funding.InstantCredit{}, fmt.Errorf("read pacs.008: want a message id and exactly one transaction")
	}
	tx := m.CdtTrfTxInf[0]
	out := funding.InstantCredit{
		MessageID:   string(m.GrpHdr.MsgId),
		AmountCents: int(math.Round(tx.IntrBkSttlmAmt.Value * 100)),
	}
	if id := tx.CdtrAgt.FinInstnId.ClrSysMmbId; id != nil {
		out.RoutingNumber = string(id.MmbId)
	}
	if a := tx.CdtrAcct; a != nil {
		out.AccountNumber = string(a.Id.Othr.Id)
		out.AccountType = funding.Checking
		if a.Tp != nil && a.Tp.Cd != nil && *a.Tp.Cd == "SVGS" {
			out.AccountType = funding.Savings
		}
	}
	if tx.RmtInf != nil && len(tx.RmtInf.Ustrd) > 0 {
		out.Remittance = string(tx.RmtInf.Ustrd[0])
	}
	if out.RoutingNumber == "" || out.AccountNumber == "" {
		return funding.InstantCredit{}, fmt.Errorf("read pacs.008: the creditor's agent and account are required")
	}
	return out, nil
}

// Report is a pacs.002's answer on one credit.
type Report struct {
	MessageID         string // the report's own id
	OriginalMessageID string
	Status            string // ACSC, ACCP or RJCT
	Reason            string // the rejection reason code, when rejected
	At                time.Time
}

// EncodeReport writes r as a pacs.002.
func EncodeReport(r Report) ([]byte, error) {
	sts := pacs_v10.ExternalPaymentTransactionStatus1Code(r.Status)
	orig := common.Max35Text(r.OriginalMessageID)
	at := common.ISODateTime(r.At.UTC())
	tx := pacs_v10.PaymentTransaction110{
		OrgnlGrpInf:     &pacs_v10.OriginalGroupInformation29{OrgnlMsgId: orig, OrgnlMsgNmId: "pacs.008.001.08"},
		OrgnlEndToEndId: &orig,
		TxSts:           &sts,
		AccptncDtTm:     &at,
	}
	if r.Reason != "" {
		code := pacs_v10.ExternalStatusReason1Code(r.Reason)
		tx.StsRsnInf = []pacs_v10.StatusReasonInformation12{{Rsn: &pacs_v10.StatusReason6Choice{Cd: &code}}}
	}
	doc := statusDocument{Message: pacs_v10.FIToFIPaymentStatusReportV10{
		GrpHdr:      pacs_v10.GroupHeader91{MsgId: common.Max35Text(r.MessageID), CreDtTm: at},
		TxInfAndSts: []pacs_v10.PaymentTransaction110{tx},
	}}
	return xml.Marshal(doc)
}

// StatusNamespaces are the pacs.002 versions DecodeReport reads: .001.08
// to .001.12. The elements it reads (the group header, the original group
// and transaction ids, the group and transaction status and the status
// reason) have the same names and places in each.
var StatusNamespaces = []string{
	"urn:iso:std:iso:20022:tech:xsd:pacs.002.001.08",
	"urn:iso:std:iso:20022:tech:xsd:pacs.002.001.09",
	"urn:iso:std:iso:20022:tech:xsd:pacs.002.001.10",
	"urn:iso:std:iso:20022:tech:xsd:pacs.002.001.11",
	"urn:iso:std:iso:20022:tech:xsd:pacs.002.001.12",
}

// statusReport is what DecodeReport reads of a pacs.002, whatever its
// version: element names without a namespace match in any, and the
// document's own namespace is checked against StatusNamespaces.
type statusReport struct {
	XMLName xml.Name `xml:"Document"`
	Report  struct {
		GrpHdr struct {
			MsgId   string `xml:"MsgId"`
			CreDtTm string `xml:"CreDtTm"`
		} `xml:"GrpHdr"`
		Groups []struct {
			OrgnlMsgId string         `xml:"OrgnlMsgId"`
			GrpSts     string         `xml:"GrpSts"`
			StsRsnInf  []statusReason `xml:"StsRsnInf"`
		} `xml:"OrgnlGrpInfAndSts"`
		Txs []struct {
			OrgnlGrpInf *struct {
				OrgnlMsgId string `xml:"OrgnlMsgId"`
			} `xml:"OrgnlGrpInf"`
			OrgnlEndToEndId string         `xml:"OrgnlEndToEndId"`
			OrgnlTxId       string         `xml:"OrgnlTxId"`
			TxSts           string         `xml:"TxSts"`
			StsRsnInf       []statusReason `xml:"StsRsnInf"`
		} `xml:"TxInfAndSts"`
	} `xml:"FIToFIPmtStsRpt"`
}

type statusReason struct {
	Rsn struct {
		Cd string `xml:"Cd"`
	} `xml:"Rsn"`
}

func reasonOf(rs []statusReason) string {
	for _, r := range rs {
		if c := strings.TrimSpace(r.Rsn.Cd); c != "" {
			return c
		}
	}
	return ""
}

// DecodeReport reads a pacs.002 (.001.08 to .001.12) answering one
// credit: the status and reason of its one transaction, or of its group
// when it has no transaction status. The credit it answers is named by
// every original id it carries (group message id, end-to-end id,
// transaction id); ids that disagree, another version, or no status are
// errors.
func DecodeReport(body []byte) (Report, error) {
	var doc statusReport
	if err := xml.Unmarshal(body, &doc); err != nil {
		return Report{}, fmt.Errorf("read pacs.002: %w", err)
	}
	if !slices.Contains(StatusNamespaces, doc.XMLName.Space) {
		return Report{}, fmt.Errorf("read pacs.002: namespace %q is not pacs.002.001.08 to .001.12", doc.XMLName.Space)
	}
	m := doc.Report
	r := Report{MessageID: strings.TrimSpace(m.GrpHdr.MsgId)}
	if at, err := time.Parse("2006-01-02T15:04:05.999999999Z07:00", strings.TrimSpace(m.GrpHdr.CreDtTm)); err == nil {
		r.At = at.UTC()
	} else if at, err := time.Parse("2006-01-02T15:04:05.999999999", strings.TrimSpace(m.GrpHdr.CreDtTm)); err == nil {
		r.At = at.UTC()
	}
	var ids []string
	switch {
	case len(m.Txs) > 1 || len(m.Groups) > 1:
		return Report{}, fmt.Errorf("read pacs.002: want one transaction, got %d transaction and %d group statuses", len(m.Txs), len(m.Groups))
	case len(m.Txs) == 1 && strings.TrimSpace(m.Txs[0].TxSts) != "":
		tx := m.Txs[0]
		r.Status, r.Reason = strings.TrimSpace(tx.TxSts), reasonOf(tx.StsRsnInf)
		if tx.OrgnlGrpInf != nil {
			ids = append(ids, tx.OrgnlGrpInf.OrgnlMsgId)
		}
		ids = append(ids, tx.OrgnlEndToEndId, tx.OrgnlTxId)
	case len(m.Groups) == 1 && strings.TrimSpace(m.Groups[0].GrpSts) != "":
		g := m.Groups[0]
		r.Status, r.Reason = strings.TrimSpace(g.GrpSts), reasonOf(g.StsRsnInf)
	default:
		return Report{}, fmt.Errorf("read pacs.002: no transaction or group status")
	}
	if len(m.Groups) == 1 {
		ids = append(ids, m.Groups[0].OrgnlMsgId)
	}
	for _, id := range ids {
		switch id = strings.TrimSpace(id); {
		case id == "":
		case r.OriginalMessageID == "":
			r.OriginalMessageID = id
		case id != r.OriginalMessageID:
			return Report{}, fmt.Errorf("read pacs.002: original ids %q and %q disagree", r.OriginalMessageID, id)
		}
	}
	if r.OriginalMessageID == "" {
		return Report{}, fmt.Errorf("read pacs.002: no original message, end-to-end or transaction id")
	}
	return r, nil
}

func ptr[T any](v T) *T { return &v }
