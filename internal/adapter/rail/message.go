package rail

import (
	"encoding/xml"
	"fmt"
	"math"
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

// DecodeReport reads a pacs.002 with one transaction status.
func DecodeReport(body []byte) (Report, error) {
	var doc statusDocument
	if err := xml.Unmarshal(body, &doc); err != nil {
		return Report{}, fmt.Errorf("read pacs.002: %w", err)
	}
	m := doc.Message
	if len(m.TxInfAndSts) != 1 || m.TxInfAndSts[0].TxSts == nil {
		return Report{}, fmt.Errorf("read pacs.002: want exactly one transaction status")
	}
	tx := m.TxInfAndSts[0]
	r := Report{MessageID: string(m.GrpHdr.MsgId), Status: strings.TrimSpace(string(*tx.TxSts)), At: time.Time(m.GrpHdr.CreDtTm).UTC()}
	switch {
	case tx.OrgnlGrpInf != nil:
		r.OriginalMessageID = string(tx.OrgnlGrpInf.OrgnlMsgId)
	case tx.OrgnlEndToEndId != nil:
		r.OriginalMessageID = string(*tx.OrgnlEndToEndId)
	}
	for _, s := range tx.StsRsnInf {
		if s.Rsn != nil && s.Rsn.Cd != nil {
			r.Reason = string(*s.Rsn.Cd)
			break
		}
	}
	return r, nil
}

func ptr[T any](v T) *T { return &v }
