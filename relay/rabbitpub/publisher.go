package rabbitpub

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jitoutbox/jitoutbox/relay"
)

// closeTimeout bounds the AMQP close handshake of Close and of a connection
// that cannot open a channel; discardTimeout that of a connection dropped
// after a batch was abandoned (the broker may be the reason it was: the
// close then ends without the broker's close-ok).
const (
	closeTimeout   = 2 * time.Second
	discardTimeout = 100 * time.Millisecond
)

// DialFunc opens a connection to the broker. The publisher owns each
// connection it returns (it closes it), so a DialFunc opens a new one on
// every call. It must not enable amqp091-go's automatic recovery
// (amqp.Config.Recovery): the publisher reconnects by itself.
type DialFunc func(ctx context.Context) (*amqp.Connection, error)

// Publisher publishes to RabbitMQ with publisher confirms, at least once: a
// message counts as delivered when the broker has confirmed it (basic.ack)
// and has not returned it.
//
// It keeps one connection with one confirm-mode channel and has one batch
// in flight: concurrent Publish calls take turns. The connection is opened
// by the first Publish and opened again by the Publish after it is lost; no
// goroutine of the publisher outlives a call.
//
// A Publisher is safe for concurrent use.
type Publisher struct {
	dial DialFunc
	opts *options

	// turn is held by the Publish in flight; it guards sess.
	turn chan struct{}
	sess *session

	mu     sync.Mutex // guards conn and closed
	conn   *amqp.Connection
	closed bool
}

var _ relay.Publisher = (*Publisher)(nil)

// session is one connection's confirm-mode channel and its notifications.
type session struct {
	conn    *amqp.Connection
	ch      *amqp.Channel
	closes  chan *amqp.Error
	returns chan amqp.Return
	// blocks receives the broker's connection.blocked and unblocked
	// notifications (a resource alarm).
	blocks chan amqp.Blocking
	// cause is the channel's close reason, once read from closes; blocked
	// the last blocking notification.
	cause   *amqp.Error
	blocked amqp.Blocking
}

// New returns a publisher for the broker at the AMQP URL
// ("amqp://user:password@host:5672/vhost", or amqps:// for TLS). It checks
// the URL but does not connect: the first Publish does. Neither New nor the
// publisher ever logs the URL or puts it in an error, since it may hold a
// password.
func New(amqpURL string, opts ...Option) (*Publisher, error) {
	if _, err := amqp.ParseURI(amqpURL); err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error's text repeats the URL.
		}
		return nil, fmt.Errorf("%w: AMQP URL: %w", ErrInvalidOption, err)
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	return newPublisher(urlDialer(amqpURL, o), o), nil
}

// NewDial returns a publisher that opens its connections with dial, for
// settings New does not offer (TLS, SASL, connection properties). It does
// not connect: the first Publish does. WithDialTimeout and WithHeartbeat do
// not apply and make it fail.
func NewDial(dial DialFunc, opts ...Option) (*Publisher, error) {
	if dial == nil {
		return nil, fmt.Errorf("%w: nil DialFunc", ErrInvalidOption)
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	if o.urlOnly {
		return nil, fmt.Errorf("%w: WithDialTimeout and WithHeartbeat apply to New only; set them in the DialFunc", ErrInvalidOption)
	}
	return newPublisher(dial, o), nil
}

func newPublisher(dial DialFunc, o *options) *Publisher {
	return &Publisher{dial: dial, opts: o, turn: make(chan struct{}, 1)}
}

// urlDialer dials amqpURL with a TCP connect and handshake bounded by the
// dial timeout and by ctx's deadline.
func urlDialer(amqpURL string, o *options) DialFunc {
	return func(ctx context.Context) (*amqp.Connection, error) {
		deadline := time.Now().Add(o.dialTimeout)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		cfg := amqp.Config{
			Heartbeat: o.heartbeat,
			Locale:    "en_US",
			Dial: func(network, addr string) (net.Conn, error) {
				d := net.Dialer{Deadline: deadline}
				c, err := d.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				// Cleared by amqp091-go once the handshake is done.
				if err := c.SetDeadline(deadline); err != nil {
					_ = c.Close()
					return nil, err
				}
				return c, nil
			},
		}
		return amqp.DialConfig(amqpURL, cfg)
	}
}

// Close closes the publisher's connection. A Publish in flight ends with
// retryable errors for its unconfirmed messages; later Publish calls record
// ErrClosed. Close may be called more than once.
func (p *Publisher) Close() error {
	p.mu.Lock()
	c := p.conn
	p.conn, p.closed = nil, true
	p.mu.Unlock()
	if c == nil || c.IsClosed() {
		return nil
	}
	if err := c.CloseDeadline(time.Now().Add(closeTimeout)); err != nil && !errors.Is(err, amqp.ErrClosed) {
		return fmt.Errorf("rabbitpub: close: %w", err)
	}
	return nil
}

// session returns the open session, connecting and opening a channel as
// needed. The caller holds p.turn.
func (p *Publisher) session(ctx context.Context) (*session, error) {
	if s := p.sess; s != nil && !s.conn.IsClosed() && !s.ch.IsClosed() {
		return s, nil
	}
	p.mu.Lock()
	closed, conn := p.closed, p.conn
	p.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if conn == nil || conn.IsClosed() {
		lost := conn != nil
		var err error
		if conn, err = p.connect(ctx); err != nil {
			return nil, err
		}
		if lost {
			p.opts.logger.InfoContext(ctx, "rabbitpub: reconnected to the broker")
		}
	}
	s, err := openSession(conn, p.sess)
	if err != nil {
		if !conn.IsClosed() {
			// A connection that cannot open a channel is of no use.
			_ = conn.CloseDeadline(time.Now().Add(closeTimeout))
		}
		return nil, fmt.Errorf("%w: open channel: %w", ErrNotConnected, err)
	}
	p.sess = s
	return s, nil
}

// connect dials and stores a new connection, unless the publisher was
// closed meanwhile.
func (p *Publisher) connect(ctx context.Context) (*amqp.Connection, error) {
	conn, err := p.dial(ctx)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("rabbitpub: connect: %w", cerr)
		}
		return nil, fmt.Errorf("%w: connect: %w", ErrNotConnected, err)
	}
	if conn == nil {
		return nil, fmt.Errorf("%w: connect: DialFunc returned a nil connection", ErrNotConnected)
	}
	if conn.IsRecoveryEnabled() {
		_ = conn.CloseDeadline(time.Now().Add(closeTimeout))
		return nil, fmt.Errorf("%w: %w", ErrNotConnected, ErrRecoveryEnabled)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = conn.CloseDeadline(time.Now().Add(closeTimeout))
		return nil, ErrClosed
	}
	p.conn = conn
	return conn, nil
}

// openSession opens a channel in confirm mode on conn and registers its
// close and return notifications. prev is the previous session, nil if
// none: on the same connection its blocking notifications carry over (a
// connection's listeners are never removed, and one nobody reads would hold
// up the client library).
func openSession(conn *amqp.Connection, prev *session) (*session, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, err
	}
	var blocks chan amqp.Blocking
	var blocked amqp.Blocking
	if prev != nil && prev.conn == conn {
		blocks, blocked = prev.blocks, prev.blocked
	} else {
		// Each notification replaces the previous one; a buffer of eight
		// lets the client library go on while we are not reading.
		blocks = conn.NotifyBlocked(make(chan amqp.Blocking, 8))
	}
	s := &session{
		conn:    conn,
		blocks:  blocks,
		blocked: blocked,
		ch:      ch,
		// One close reason is ever sent: a buffer of one never blocks the
		// client library's shutdown.
		closes:  ch.NotifyClose(make(chan *amqp.Error, 1)),
		returns: ch.NotifyReturn(make(chan amqp.Return, DefaultReturnBuffer)),
	}
	if err := ch.Confirm(false); err != nil {
		return nil, fmt.Errorf("enable confirms: %w", err)
	}
	return s, nil
}

// discard drops the session after a batch was abandoned with messages
// unconfirmed: closing the connection discards their late confirms and
// returns, which must not be read as those of a later batch.
func (p *Publisher) discard(s *session) {
	p.sess = nil
	p.mu.Lock()
	if p.conn == s.conn {
		p.conn = nil
	}
	p.mu.Unlock()
	_ = s.conn.CloseDeadline(time.Now().Add(discardTimeout))
}

// closeCause returns the channel's close reason if the channel has closed
// with one, reading it from the notification once.
func (s *session) closeCause() *amqp.Error {
	if s.cause == nil {
		select {
		case e, ok := <-s.closes:
			if ok && e != nil {
				s.cause = e
			}
		default:
		}
	}
	return s.cause
}

// blockedError returns a retryable error while the broker has blocked the
// connection (connection.blocked, sent on a memory or disk alarm): a
// publish would wait until the alarm clears.
func (s *session) blockedError() error {
	for drained := false; !drained; {
		select {
		case b, ok := <-s.blocks:
			if ok {
				s.blocked = b
			} else {
				drained = true
			}
		default:
			drained = true
		}
	}
	if s.blocked.Active {
		return fmt.Errorf("%w: the broker blocked the connection: %s", ErrNotConnected, s.blocked.Reason)
	}
	return nil
}
