package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// maxHexDump is the most payload bytes the event page dumps in hex.
const maxHexDump = 4096

// templateFuncs are the helpers the console's templates call.
var templateFuncs = template.FuncMap{
	"shortTime": shortTime,
	"ranges":    ranges,
	"clip":      clip,
	"esc":       safe,
	"since": func(now, t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return age(now.Sub(t))
	},
	"actID": func(verb, id string, v view) actionForm {
		return actionForm{verb, "id:" + id, id, "", "", false, v.CSRF, v.Path, v.Base}
	},
	"actAgg": func(verb, typ, id string, v view) actionForm {
		return actionForm{verb, "aggregate:" + typ + "/" + id, "", typ, id, false, v.CSRF, v.Path, v.Base}
	},
	"actAll": func(verb string, v view) actionForm {
		return actionForm{verb, "all", "", "", "", true, v.CSRF, v.Path, v.Base}
	},
	"plural":       plural,
	"dictBlockers": func(v view, rows []dialects.Blocker) blockersView { return blockersView{v, rows} },
	"dictRows":     func(v view, rows []dialects.Row) rowsView { return rowsView{v, rows} },
	"until": func(now, t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		if d := t.Sub(now); d > 0 {
			return "in " + age(d)
		}
		return "due"
	},
}

// actionForm is one requeue or skip button (template "act").
type actionForm struct {
	Verb           string // "requeue" or "skip"
	Target         string // what it acts on, for the button's data-act
	ID             string
	AggType, AggID string
	All            bool
	CSRF           string
	Back           string
	Base           string // view.Base: the form posts to Base + "/" + Verb
}

// blockersView and rowsView pass a page's view and a list to the shared
// "blockers" and "deadrows" templates.
type (
	blockersView struct {
		V    view
		Rows []dialects.Blocker
	}
	rowsView struct {
		V    view
		Rows []dialects.Row
	}
)

// overviewData is the main page.
type overviewData struct {
	Stats     dialects.Stats
	Cleanup   *cleanupJSON // nil with -retention 0
	Relays    int
	Free      int
	Count     int
	Blockers  []dialects.Blocker
	Dead      []dialects.Row
	MoreDead  bool
	MoreBlock bool
}

// overviewRows is how many blocked aggregates and dead letters the main
// page shows.
const overviewRows = 10

func (c *console) overview(w http.ResponseWriter, r *http.Request) {
	ctx, now, d := r.Context(), time.Now(), c.dialect(r)
	s, err := d.Stats(ctx, c.db)
	if err != nil {
		c.dbFail(w, r, "read stats", err)
		return
	}
	data := overviewData{Stats: s}
	if data.Cleanup, err = cleanupHealth(ctx, c.db, d, s, now, c.opts.retention); err != nil {
		c.dbFail(w, r, "read rows past retention", err)
		return
	}
	o, err := d.Ownership(ctx, c.db, now)
	if err != nil {
		c.dbFail(w, r, "read ownership", err)
		return
	}
	data.Relays, data.Free, data.Count = len(o.Relays), len(o.Free()), len(o.Partitions)
	if data.Blockers, err = d.BlockerSummaries(ctx, c.db, now, overviewRows+1); err != nil {
		c.dbFail(w, r, "read blocked aggregates", err)
		return
	}
	if len(data.Blockers) > overviewRows {
		data.Blockers, data.MoreBlock = data.Blockers[:overviewRows], true
	}
	if data.Dead, err = d.ListSummaries(ctx, c.db, dialects.ListFilter{State: dialects.StateDead, Limit: overviewRows + 1}); err != nil {
		c.dbFail(w, r, "list dead letters", err)
		return
	}
	if len(data.Dead) > overviewRows {
		data.Dead, data.MoreDead = data.Dead[:overviewRows], true
	}
	c.render(w, r, http.StatusOK, "overview", "Overview", data)
}

// partitionsData is the partitions page.
type partitionsData struct {
	Relays     []relayRow
	Partitions []partitionRow
	Free       []int
}

type relayRow struct {
	dialects.RelaySession
	Owned []int
}

type partitionRow struct {
	dialects.PartitionOwner
	OwnerName string
}

func (c *console) partitions(w http.ResponseWriter, r *http.Request) {
	o, err := c.dialect(r).Ownership(r.Context(), c.db, time.Now())
	if err != nil {
		c.dbFail(w, r, "read ownership", err)
		return
	}
	data := partitionsData{Free: o.Free()}
	names := map[string]string{}
	for _, rs := range o.Relays {
		names[rs.Token] = rs.Name
		data.Relays = append(data.Relays, relayRow{RelaySession: rs, Owned: o.Owned(rs.Token)})
	}
	for _, p := range o.Partitions {
		data.Partitions = append(data.Partitions, partitionRow{PartitionOwner: p, OwnerName: names[p.Owner]})
	}
	c.render(w, r, http.StatusOK, "partitions", "Partitions and relays", data)
}

func (c *console) blocked(w http.ResponseWriter, r *http.Request) {
	bl, err := c.dialect(r).BlockerSummaries(r.Context(), c.db, time.Now(), c.opts.limit)
	if err != nil {
		c.dbFail(w, r, "read blocked aggregates", err)
		return
	}
	c.render(w, r, http.StatusOK, "blocked", "Blocked aggregates", bl)
}

// deadData is the dead letters page.
type deadData struct {
	Rows          []dialects.Row
	AggregateType string
	AggregateID   string
	After         int64
	Next          string // the next page's query; "" on the last page
}

func (c *console) dead(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	data := deadData{AggregateType: q.Get("aggregate_type"), AggregateID: q.Get("aggregate_id")}
	if a := q.Get("after"); a != "" {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil || n < 0 {
			c.fail(w, r, http.StatusBadRequest, "after must be a sequence number")
			return
		}
		data.After = n
	}
	rows, err := c.dialect(r).ListSummaries(r.Context(), c.db, dialects.ListFilter{State: dialects.StateDead,
		AggregateType: data.AggregateType, AggregateID: data.AggregateID, AfterSeq: data.After, Limit: c.opts.limit + 1})
	if errors.Is(err, dialects.ErrInvalidListFilter) {
		c.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if err != nil {
		c.dbFail(w, r, "list dead letters", err)
		return
	}
	if len(rows) > c.opts.limit {
		rows = rows[:c.opts.limit]
		next := url.Values{"after": {strconv.FormatInt(rows[len(rows)-1].Seq, 10)}}
		if data.AggregateType != "" {
			next.Set("aggregate_type", data.AggregateType)
			next.Set("aggregate_id", data.AggregateID)
		}
		data.Next = next.Encode()
	}
	data.Rows = rows
	c.render(w, r, http.StatusOK, "dead", "Dead letters", data)
}

// eventData is the event page.
type eventData struct {
	Row      dialects.Row
	Payload  string // JSON as text, else base64; for an encrypted payload what payloadText says instead
	Encoding string // "text", "base64", "encrypted" or "hidden" (payloadText)
	Hex      string // hex dump of a non-JSON payload (its first maxHexDump bytes)
	HexClip  bool
}

func (c *console) event(w http.ResponseWriter, r *http.Request) {
	if !isEventID(r.PathValue("id")) {
		c.fail(w, r, http.StatusBadRequest, "not an event id: an event id is a UUID (8-4-4-4-12 hex digits)")
		return
	}
	row, err := c.dialect(r).Get(r.Context(), c.db, r.PathValue("id"))
	if errors.Is(err, dialects.ErrEventNotFound) {
		c.fail(w, r, http.StatusNotFound, "no event has this id")
		return
	}
	if err != nil {
		c.dbFail(w, r, "read event", err)
		return
	}
	data := eventData{Row: row}
	data.Payload, data.Encoding = payloadText(&row)
	if data.Encoding == "base64" && len(row.Payload) > 0 {
		p := row.Payload
		if len(p) > maxHexDump {
			p, data.HexClip = p[:maxHexDump], true
		}
		data.Hex = hex.Dump(p)
	}
	c.render(w, r, http.StatusOK, "event", "Event "+row.ID, data)
}

// action returns the handler of POST /requeue or POST /skip: the form
// selects dead events by id (repeatable "id"), by aggregate
// ("aggregate_type" and "aggregate_id") or all ("all=1"), as the CLI's
// flags do; "back" is the page to return to.
func (c *console) action(verb string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			c.fail(w, r, http.StatusBadRequest, "bad form: "+err.Error())
			return
		}
		if c.opts.readOnly {
			c.fail(w, r, http.StatusForbidden, "this console is read-only (-read-only)")
			return
		}
		f := dialects.RequeueFilter{IDs: r.PostForm["id"], AggregateType: r.PostFormValue("aggregate_type"),
			AggregateID: r.PostFormValue("aggregate_id"), All: r.PostFormValue("all") == "1"}
		if _, ok := checkIDs(f.IDs); !ok {
			c.fail(w, r, http.StatusBadRequest, verb+": not an event id: an event id is a UUID (8-4-4-4-12 hex digits)")
			return
		}
		var (
			n   int64
			err error
			d   = c.dialect(r)
		)
		if verb == "requeue" {
			n, err = d.Requeue(r.Context(), c.db, f, time.Now())
		} else {
			n, err = d.Skip(r.Context(), c.db, f)
		}
		if errors.Is(err, dialects.ErrInvalidRequeueFilter) {
			c.fail(w, r, http.StatusBadRequest, verb+" needs one event id, one aggregate or all: "+err.Error())
			return
		}
		if err != nil {
			c.dbFail(w, r, verb, err)
			return
		}
		c.log.Info("console: "+verb, "table", d.Table(), "events", n, "ids", len(f.IDs), "aggregate_type", f.AggregateType,
			"aggregate_id", f.AggregateID, "all", f.All, "remote", r.RemoteAddr)
		http.Redirect(w, r, backTo(r.PostFormValue("back"), verb, n), http.StatusSeeOther)
	}
}

// backTo returns a local path to redirect to, with the action done and its
// count in the query (the page words the message: a link cannot make the
// console say anything else); a value that is not a path of this console
// becomes "/".
func backTo(back, verb string, n int64) string {
	u, err := url.Parse(back)
	if err != nil || !strings.HasPrefix(back, "/") || strings.HasPrefix(back, "//") || strings.HasPrefix(back, "/\\") ||
		u.Scheme != "" || u.Host != "" {
		u = &url.URL{Path: "/"}
	}
	q := u.Query()
	q.Set("done", verb)
	q.Set("n", strconv.FormatInt(n, 10))
	u.RawQuery = q.Encode()
	return u.String()
}

// doneMessage words the result of the action named by a page's query
// ("done" and "n", set by backTo); "" for none.
func doneMessage(q url.Values) string {
	n, err := strconv.ParseInt(q.Get("n"), 10, 64)
	if err != nil || n < 0 {
		return ""
	}
	switch q.Get("done") {
	case "requeue":
		return fmt.Sprintf("requeued %s: each is published first, then its aggregate's later events", plural(int(n), "dead event"))
	case "skip":
		return fmt.Sprintf("skipped %s: they stay dead, their aggregates' later events flow", plural(int(n), "dead event"))
	}
	return ""
}
