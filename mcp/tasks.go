package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/tool"
)

// TasksExtension is the identifier of MCP's tasks extension (SEP-2663), as
// clients and servers name it under capabilities.extensions.
const TasksExtension = "io.modelcontextprotocol/tasks"

// The JSON-RPC methods of the tasks extension, and its status notification.
const (
	methodTasksGet     = "tasks/get"
	methodTasksUpdate  = "tasks/update"
	methodTasksCancel  = "tasks/cancel"
	notificationTasks  = "notifications/tasks"
	codeMissingCapable = -32021 // MissingRequiredClientCapability (SEP-2575)
)

// TaskStatus is the state of a task, as the tasks extension names it.
type TaskStatus string

// The statuses of a task. Completed, Failed and Cancelled are terminal:
// a tool that ran and reported an error is Completed with an error result;
// Failed is for a call that could not be run or answered (a protocol
// error).
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether the status is final.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// TaskError is the JSON-RPC error of a failed task.
type TaskError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Task is the record of one long-running tools/call, as a TaskStore keeps
// it: everything tasks/get answers, and who may ask. It holds no live
// state (the running call stays in the process that runs it), so a shared
// store can keep it.
type Task struct {
	// ID is the task's id, minted by the server; unguessable.
	ID string `json:"taskId"`
	// Owner is who created the task (the caller's token subject, or a
	// fixed name for a server without authentication): only the owner
	// reads, answers or cancels it.
	Owner string `json:"owner"`
	// Tool is the name of the tool called.
	Tool   string     `json:"tool"`
	Status TaskStatus `json:"status"`
	// StatusMessage says, for people, what the task is doing or waits for.
	StatusMessage string    `json:"statusMessage,omitempty"`
	CreatedAt     time.Time `json:"createdAt"`
	LastUpdatedAt time.Time `json:"lastUpdatedAt"`
	// TTL is how long the task is kept after it was created.
	TTL time.Duration `json:"ttl"`
	// InputRequests are the requests the task waits for an answer to
	// (status input_required), by the ids tasks/update answers them with:
	// each an MCP request ({"method": "elicitation/create", "params": ...}).
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	// Result is the tools/call result of a completed task.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the error of a failed task.
	Error *TaskError `json:"error,omitempty"`
}

// expired reports whether the task's TTL has passed at now.
func (t *Task) expired(now time.Time) bool {
	return t.TTL > 0 && now.Sub(t.CreatedAt) >= t.TTL
}

// ErrTaskNotFound is the error of a TaskStore asked for a task it does not
// hold (never created, deleted, or expired).
var ErrTaskNotFound = errors.New("no such task")

// TaskStore keeps the records of tasks. MemoryTaskStore is the default;
// a store shared by replicas (a database, Redis) lets any replica answer
// tasks/get (see docs/deploy.md). Implementations are safe for concurrent
// use and return copies: a caller never shares a *Task with the store.
type TaskStore interface {
	// Create adds a new task.
	Create(ctx context.Context, t *Task) error
	// Get returns the task with the id, or ErrTaskNotFound.
	Get(ctx context.Context, id string) (*Task, error)
	// Update applies change to the task atomically (no other Update of
	// the same task runs between its read and its write) and returns the
	// task as written; an error of change is returned and nothing is
	// written.
	Update(ctx context.Context, id string, change func(*Task) error) (*Task, error)
	// Delete removes the task; deleting a missing task is not an error.
	Delete(ctx context.Context, id string) error
}

// MemoryTaskStore is a TaskStore in the process's memory: tasks live as
// long as the process, or until their TTL. The zero value is ready.
type MemoryTaskStore struct {
	// Now is the clock expiry is measured by; time.Now when nil.
	Now func() time.Time

	mu    sync.Mutex
	tasks map[string]*Task
}

func (m *MemoryTaskStore) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// Create adds t, and drops the tasks whose TTL has passed.
func (m *MemoryTaskStore) Create(_ context.Context, t *Task) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tasks == nil {
		m.tasks = map[string]*Task{}
	}
	now := m.now()
	for id, old := range m.tasks {
		if old.expired(now) {
			delete(m.tasks, id)
		}
	}
	if _, ok := m.tasks[t.ID]; ok {
		return fmt.Errorf("task %q exists already", t.ID)
	}
	m.tasks[t.ID] = cloneTask(t)
	return nil
}

// Get returns a copy of the task, or ErrTaskNotFound when it is missing
// or expired.
func (m *MemoryTaskStore) Get(_ context.Context, id string) (*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok || t.expired(m.now()) {
		return nil, ErrTaskNotFound
	}
	return cloneTask(t), nil
}

// Update applies change to a copy of the task and keeps the copy.
func (m *MemoryTaskStore) Update(_ context.Context, id string, change func(*Task) error) (*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok || t.expired(m.now()) {
		return nil, ErrTaskNotFound
	}
	c := cloneTask(t)
	if err := change(c); err != nil {
		return nil, err
	}
	m.tasks[id] = c
	return cloneTask(c), nil
}

// Delete removes the task.
func (m *MemoryTaskStore) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.tasks, id)
	return nil
}

func cloneTask(t *Task) *Task {
	c := *t
	c.InputRequests = maps.Clone(t.InputRequests)
	c.Result = slices.Clone(t.Result)
	if t.Error != nil {
		e := *t.Error
		c.Error = &e
	}
	return &c
}

// TaskOptions configures Tasks. The zero value is usable.
type TaskOptions struct {
	// Store keeps the task records; a new MemoryTaskStore when nil.
	Store TaskStore
	// TTL is how long a task is kept after it was created: tasks/get
	// answers for at least that long. One hour when zero.
	TTL time.Duration
	// PollInterval is the interval the server suggests between two
	// tasks/get; one second when zero.
	PollInterval time.Duration
	// OnStatus is called after each change of a task's status (and of
	// its pending input requests), with a copy of the record: the hook of
	// notifications/tasks. It must not block.
	OnStatus func(Task)
	// Now is the clock of createdAt and lastUpdatedAt; time.Now when nil.
	Now func() time.Time
	// MaxRunning bounds the tasks running at once, of every owner
	// together; Start refuses more with a *TaskLimitError. 64 when zero.
	MaxRunning int
	// CallOptions are the options of each call a task runs (workspace,
	// generator...); its Respond, Confirm, Interact and CallID are the
	// task's own.
	CallOptions *tool.CallOptions
}

// Tasks runs tools/call requests of a toolset as tasks of MCP's tasks
// extension: Start returns at once with the task's record, the call runs
// on, and the client polls it with tasks/get. A question the call asks
// (a confirmation, text, a choice, a form) parks the task in
// input_required with the question as an elicitation/create input
// request; tasks/update delivers the answers (all at once or some at a
// time) and the call goes on. tasks/cancel cancels the call's context.
//
// The records are kept in the TaskStore; the running calls, and the
// answers they wait for, in this Tasks: tasks/update and tasks/cancel
// must reach the process that runs the task.
type Tasks struct {
	ts    tool.Toolset
	opts  TaskOptions
	store TaskStore

	mu      sync.Mutex
	running map[string]*liveTask
	closed  bool
	wg      sync.WaitGroup
}

// liveTask is the part of a task that lives in its process: the call's
// cancel function and the questions it waits on.
type liveTask struct {
	cancel  context.CancelCauseFunc
	mu      sync.Mutex
	pending map[string]*pendingInput
}

// pendingInput is one input request a task's call waits on: decode reads
// the client's answer to it (an error names what is wrong with it).
type pendingInput struct {
	decode func(json.RawMessage) (any, error)
	answer chan any
}

// errTaskCancelled is the cause of a task's context when tasks/cancel
// arrived.
var errTaskCancelled = errors.New("the task was cancelled")

// NewTasks returns the task runner of ts; nil opts means defaults.
func NewTasks(ts tool.Toolset, opts *TaskOptions) *Tasks {
	var o TaskOptions
	if opts != nil {
		o = *opts
	}
	if o.Store == nil {
		o.Store = &MemoryTaskStore{Now: o.Now}
	}
	if o.TTL <= 0 {
		o.TTL = time.Hour
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxRunning <= 0 {
		o.MaxRunning = 64
	}
	return &Tasks{ts: ts, opts: o, store: o.Store, running: map[string]*liveTask{}}
}

// TaskCall is a call StartCall runs as a task.
type TaskCall struct {
	// Tool is the name of the tool called; Arguments its arguments.
	Tool      string
	Arguments json.RawMessage
	// ClientCapabilities are the capabilities the client declared: the
	// requests AskClient puts inside the task need them (elicitation,
	// sampling, roots). nil declares none.
	ClientCapabilities *sdk.ClientCapabilities
	// Given are answers the client brought with the call itself (the
	// inputResponses of a call whose intake asked first, see
	// TaskHTTPOptions.Intake): AskClient inside the task answers a request
	// of the same key from them, once, without asking again.
	Given sdk.InputResponseMap
}

// Start creates a task for a call of the tool name by owner and runs the
// call in the background; it returns the task as created (working). It
// is StartCall with a call that declares no client capabilities.
func (t *Tasks) Start(ctx context.Context, owner, name string, args json.RawMessage) (*Task, error) {
	return t.StartCall(ctx, owner, &TaskCall{Tool: name, Arguments: args})
}

// StartCall creates a task for call by owner and runs the call in the
// background; it returns the task as created (working).
func (t *Tasks) StartCall(ctx context.Context, owner string, call *TaskCall) (*Task, error) {
	name, args := call.Tool, call.Arguments
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, &tool.ClosedError{What: "MCP tasks"}
	}
	if len(t.running) >= t.opts.MaxRunning {
		t.mu.Unlock()
		return nil, &TaskLimitError{Limit: t.opts.MaxRunning}
	}
	t.mu.Unlock()
	now := t.opts.Now().UTC()
	task := &Task{ID: tool.NewID(), Owner: owner, Tool: name, Status: TaskWorking, CreatedAt: now, LastUpdatedAt: now, TTL: t.opts.TTL}
	if err := t.store.Create(ctx, task); err != nil {
		return nil, fmt.Errorf("creating a task for %s: %w", name, err)
	}
	// The call outlives the request that started it: it ends with
	// tasks/cancel, its own end, or Close.
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	live := &liveTask{cancel: cancel, pending: map[string]*pendingInput{}}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		cancel(nil)
		_ = t.store.Delete(ctx, task.ID)
		return nil, &tool.ClosedError{What: "MCP tasks"}
	}
	t.running[task.ID] = live
	t.wg.Add(1)
	t.mu.Unlock()
	t.notify(task)
	// AskClient's requests are host requests of the call, which the
	// task's asker answers (hostask.go).
	asker := t.clientAsker(task.ID, live, call.ClientCapabilities, maps.Clone(call.Given))
	runCtx = withClientAsker(runCtx, askViaCall(asker))
	go t.run(runCtx, task.ID, name, args, live, asker)
	return cloneTask(task), nil
}

// run drives the call of a task to its end and records the outcome.
func (t *Tasks) run(ctx context.Context, id, name string, args json.RawMessage, live *liveTask, asker clientAsker) {
	defer t.wg.Done()
	defer func() {
		t.mu.Lock()
		delete(t.running, id)
		t.mu.Unlock()
		live.cancel(nil)
	}()
	var opts tool.CallOptions
	if t.opts.CallOptions != nil {
		opts = *t.opts.CallOptions
	}
	opts.CallID = id
	opts.Confirm, opts.Interact = nil, nil
	opts.Respond = func(ctx context.Context, r *tool.Request) tool.Response {
		if r.Kind == tool.KindHost {
			return answerHost(ctx, r, nil, asker)
		}
		return t.ask(ctx, id, live, r)
	}
	res, err := tool.Call(ctx, t.ts, name, args, &opts)
	bg := context.WithoutCancel(ctx)
	switch {
	case errors.Is(context.Cause(ctx), errTaskCancelled):
		t.finish(bg, id, func(task *Task) { task.Status, task.StatusMessage = TaskCancelled, "The task was cancelled." })
	case err != nil && !isToolError(err):
		msg := err.Error()
		t.finish(bg, id, func(task *Task) {
			task.Status, task.StatusMessage = TaskFailed, msg
			task.Error = &TaskError{Code: int64(jsonrpc.CodeInternalError), Message: msg}
		})
	default:
		raw, merr := json.Marshal(toCallResult(res, err))
		t.finish(bg, id, func(task *Task) {
			if merr != nil {
				task.Status, task.Error = TaskFailed, &TaskError{Code: int64(jsonrpc.CodeInternalError), Message: merr.Error()}
				return
			}
			task.Status, task.StatusMessage, task.Result = TaskCompleted, "", raw
		})
	}
}

// isToolError reports whether err is the tool's own failure, which MCP
// reports as a result with isError (engine errors the caller caused: bad
// arguments, an unknown tool, a refusal), not a failed task.
func isToolError(err error) bool {
	var unknown *tool.UnknownToolError
	var invalid *tool.InvalidArgumentsError
	return errors.As(err, &unknown) || errors.As(err, &invalid)
}

// toCallResult is the tools/call result of a call's outcome.
func toCallResult(res *tool.Result, err error) *sdk.CallToolResult {
	if err != nil {
		return errorToMCP(err)
	}
	return toMCP(res, false)
}

// finish writes a task's terminal state and clears its input requests.
func (t *Tasks) finish(ctx context.Context, id string, set func(*Task)) {
	task, err := t.store.Update(ctx, id, func(task *Task) error {
		if task.Status.Terminal() {
			return nil
		}
		set(task)
		task.InputRequests = nil
		task.LastUpdatedAt = t.opts.Now().UTC()
		return nil
	})
	if err == nil {
		t.notify(task)
	}
}

// ask parks the task on a question of its call until tasks/update answers
// it or the task is cancelled.
func (t *Tasks) ask(ctx context.Context, id string, live *liveTask, r *tool.Request) tool.Response {
	params, err := toElicit(r)
	if err != nil {
		return r.Declined(fmt.Sprintf("an MCP task cannot ask this: %v", err))
	}
	raw, err := json.Marshal(map[string]any{"method": "elicitation/create", "params": params})
	if err != nil {
		return r.Declined(err.Error())
	}
	key := tool.NewID()
	p := &pendingInput{decode: decodeElicitResult, answer: make(chan any, 1)}
	live.mu.Lock()
	live.pending[key] = p
	live.mu.Unlock()
	defer func() {
		live.mu.Lock()
		delete(live.pending, key)
		live.mu.Unlock()
	}()
	task, err := t.store.Update(ctx, id, func(task *Task) error {
		if task.InputRequests == nil {
			task.InputRequests = map[string]json.RawMessage{}
		}
		task.InputRequests[key] = raw
		task.Status, task.StatusMessage = TaskInputRequired, questionMessage(r)
		task.LastUpdatedAt = t.opts.Now().UTC()
		return nil
	})
	if err != nil {
		return r.Declined(fmt.Sprintf("the task's record is gone: %v", err))
	}
	t.notify(task)
	select {
	case res := <-p.answer:
		return fromResult(r, res.(*sdk.ElicitResult))
	case <-ctx.Done():
		return r.Declined("The task was cancelled.")
	}
}

// decodeElicitResult reads the answer to an elicitation/create input
// request.
func decodeElicitResult(raw json.RawMessage) (any, error) {
	var res sdk.ElicitResult
	if err := json.Unmarshal(raw, &res); err != nil || res.Action == "" {
		return nil, errors.New("not an elicitation result (an object with an action)")
	}
	return &res, nil
}

// clientAsker is how AskClient asks inside a task: the requests given
// answers with the call are answered from them (each once); the others
// park the task in input_required, all at once, each under a key of its
// own, and the call waits until tasks/update has answered every one of
// them (in one update or several) or the task is cancelled.
func (t *Tasks) clientAsker(id string, live *liveTask, caps *sdk.ClientCapabilities, given sdk.InputResponseMap) clientAsker {
	var givenMu sync.Mutex
	return func(ctx context.Context, reqs sdk.InputRequestMap) (sdk.InputResponseMap, error) {
		if err := checkCapabilities(caps, reqs); err != nil {
			return nil, err
		}
		out := make(sdk.InputResponseMap, len(reqs))
		ask := sdk.InputRequestMap{}
		givenMu.Lock()
		for k, r := range reqs {
			if resp, ok := normalizeAnswer(r, given[k]); ok {
				out[k] = resp
				delete(given, k)
				continue
			}
			ask[k] = r
		}
		givenMu.Unlock()
		if len(ask) == 0 {
			return out, nil
		}
		raws, err := inputRequestsWire(ask)
		if err != nil {
			return nil, fmt.Errorf("mcp: asking inside a task: %w", err)
		}
		// Each request gets a key of the task's own, so that two
		// AskClient calls of the same call never share one.
		byKey := make(map[string]string, len(ask)) // the task's key → the caller's
		waits := make(map[string]*pendingInput, len(ask))
		live.mu.Lock()
		for k, r := range ask {
			key := tool.NewID()
			byKey[key] = k
			waits[key] = &pendingInput{decode: answerDecoder(r), answer: make(chan any, 1)}
			live.pending[key] = waits[key]
		}
		live.mu.Unlock()
		defer func() {
			live.mu.Lock()
			for key := range waits {
				delete(live.pending, key)
			}
			live.mu.Unlock()
		}()
		task, err := t.store.Update(ctx, id, func(task *Task) error {
			if task.InputRequests == nil {
				task.InputRequests = map[string]json.RawMessage{}
			}
			for key, k := range byKey {
				task.InputRequests[key] = raws[k]
			}
			task.Status, task.StatusMessage = TaskInputRequired, "Waiting for the client's input."
			task.LastUpdatedAt = t.opts.Now().UTC()
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("mcp: the task's record is gone: %w", err)
		}
		t.notify(task)
		for key, p := range waits {
			select {
			case v := <-p.answer:
				out[byKey[key]] = v.(sdk.InputResponse)
			case <-ctx.Done():
				return nil, fmt.Errorf("mcp: asking the client inside a task: %w", context.Cause(ctx))
			}
		}
		return out, nil
	}
}

// inputRequestsWire is each request of reqs as the wire carries it in
// inputRequests: {"method": ..., "params": ...}, by key.
func inputRequestsWire(reqs sdk.InputRequestMap) (map[string]json.RawMessage, error) {
	raw, err := json.Marshal(reqs)
	if err != nil {
		return nil, err
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// answerDecoder reads the answer to the input request r: an elicitation
// result, a sampling result or a roots list, as r asks for.
func answerDecoder(r sdk.InputRequest) func(json.RawMessage) (any, error) {
	return func(raw json.RawMessage) (any, error) {
		var m sdk.InputResponseMap
		if err := json.Unmarshal([]byte(`{"a":`+string(raw)+`}`), &m); err != nil {
			return nil, fmt.Errorf("not an answer to %s: %w", methodOf(r), err)
		}
		resp, ok := normalizeAnswer(r, m["a"])
		if !ok {
			return nil, fmt.Errorf("not an answer to %s", methodOf(r))
		}
		if e, isElicit := resp.(*sdk.ElicitResult); isElicit && e.Action == "" {
			return nil, errors.New("not an elicitation result (an object with an action)")
		}
		return resp, nil
	}
}

// owned returns the task if it exists, is owner's, and has not expired;
// another owner's task is as unknown as a missing one.
func (t *Tasks) owned(ctx context.Context, owner, id string) (*Task, error) {
	task, err := t.store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if task.Owner != owner {
		return nil, ErrTaskNotFound
	}
	return task, nil
}

// Get returns owner's task.
func (t *Tasks) Get(ctx context.Context, owner, id string) (*Task, error) {
	return t.owned(ctx, owner, id)
}

// Update delivers answers to the input requests of owner's task, by the
// ids tasks/get showed: some or all of them. An answer to a request the
// task does not wait for (answered already, or never made) is ignored,
// whatever it holds; an answer to a pending request that is not an answer
// of its kind (an elicitation result for elicitation/create, and so on)
// is an error, and nothing is delivered. Each answered request leaves the
// task's input requests; the task is working again when none is left.
func (t *Tasks) Update(ctx context.Context, owner, id string, responses map[string]json.RawMessage) error {
	if _, err := t.owned(ctx, owner, id); err != nil {
		return err
	}
	t.mu.Lock()
	live := t.running[id]
	t.mu.Unlock()
	if live == nil {
		return nil // the task has ended: nothing waits for the answers
	}
	live.mu.Lock()
	// Every answer to a pending request is read before any is delivered,
	// so that a bad one delivers none.
	answers := map[*pendingInput]any{}
	var keys []string
	for key, raw := range responses {
		p, ok := live.pending[key]
		if !ok {
			continue
		}
		res, err := p.decode(raw)
		if err != nil {
			live.mu.Unlock()
			return &TaskInputError{Key: shortID(key), Err: err}
		}
		answers[p] = res
		keys = append(keys, key)
	}
	var delivered []string
	for i, key := range keys {
		p := live.pending[key]
		select {
		case p.answer <- answers[p]:
			delivered = append(delivered, keys[i])
		default: // answered twice in a row: the first answer stands
		}
	}
	live.mu.Unlock()
	if len(delivered) == 0 {
		return nil
	}
	task, err := t.store.Update(ctx, id, func(task *Task) error {
		if task.Status.Terminal() {
			return nil
		}
		for _, key := range delivered {
			delete(task.InputRequests, key)
		}
		if len(task.InputRequests) == 0 {
			task.InputRequests = nil
			task.Status, task.StatusMessage = TaskWorking, ""
		}
		task.LastUpdatedAt = t.opts.Now().UTC()
		return nil
	})
	if err == nil {
		t.notify(task)
	}
	return nil
}

// TaskLimitError is the refusal of a task when TaskOptions.MaxRunning
// tasks run already.
type TaskLimitError struct{ Limit int }

func (e *TaskLimitError) Error() string {
	return fmt.Sprintf("%d tasks are running, the most this server runs at once: try again later", e.Limit)
}

// TaskInputError is an answer of tasks/update that cannot be read.
type TaskInputError struct {
	Key string
	Err error
}

func (e *TaskInputError) Error() string {
	return fmt.Sprintf("input response %q: %v", e.Key, e.Err)
}

func (e *TaskInputError) Unwrap() error { return e.Err }

// Cancel cancels owner's task: its call's context ends, and the task
// settles to cancelled. Cancelling a task that has ended does nothing.
func (t *Tasks) Cancel(ctx context.Context, owner, id string) error {
	task, err := t.owned(ctx, owner, id)
	if err != nil {
		return err
	}
	if task.Status.Terminal() {
		return nil
	}
	t.mu.Lock()
	live := t.running[id]
	t.mu.Unlock()
	if live != nil {
		live.cancel(errTaskCancelled)
		return nil
	}
	// Nothing runs it here (its process is gone): it will never end.
	t.finish(ctx, id, func(task *Task) { task.Status, task.StatusMessage = TaskCancelled, "The task was cancelled." })
	return nil
}

// Close cancels every running task and waits for their calls to end.
func (t *Tasks) Close() error {
	t.mu.Lock()
	t.closed = true
	for _, live := range t.running {
		live.cancel(errTaskCancelled)
	}
	t.mu.Unlock()
	t.wg.Wait()
	return nil
}

func (t *Tasks) notify(task *Task) {
	if t.opts.OnStatus != nil && task != nil {
		t.opts.OnStatus(*cloneTask(task))
	}
}

// The wire forms of the tasks extension.

// taskWire is the Task of the wire: CreateTaskResult (resultType "task")
// and tasks/get's DetailedTask (resultType "complete", with inputRequests,
// result or error by status).
type taskWire struct {
	ResultType     string                     `json:"resultType"`
	TaskID         string                     `json:"taskId"`
	Status         TaskStatus                 `json:"status"`
	StatusMessage  string                     `json:"statusMessage,omitempty"`
	CreatedAt      string                     `json:"createdAt"`
	LastUpdatedAt  string                     `json:"lastUpdatedAt"`
	TTLMs          int64                      `json:"ttlMs"`
	PollIntervalMs int64                      `json:"pollIntervalMs,omitempty"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests,omitempty"`
	Result         json.RawMessage            `json:"result,omitempty"`
	Error          *TaskError                 `json:"error,omitempty"`
}

func (t *Tasks) wire(task *Task, resultType string, detailed bool) taskWire {
	w := taskWire{
		ResultType:     resultType,
		TaskID:         task.ID,
		Status:         task.Status,
		StatusMessage:  task.StatusMessage,
		CreatedAt:      task.CreatedAt.UTC().Format(time.RFC3339Nano),
		LastUpdatedAt:  task.LastUpdatedAt.UTC().Format(time.RFC3339Nano),
		TTLMs:          task.TTL.Milliseconds(),
		PollIntervalMs: t.opts.PollInterval.Milliseconds(),
	}
	if detailed {
		switch task.Status {
		case TaskInputRequired:
			w.InputRequests = task.InputRequests
		case TaskCompleted:
			w.Result = task.Result
		case TaskFailed:
			w.Error = task.Error
		}
	}
	return w
}

// CreateTaskResult is the answer of a tools/call that started task: the
// flat CreateTaskResult of the extension (resultType "task").
func (t *Tasks) CreateTaskResult(task *Task) json.RawMessage {
	raw, _ := json.Marshal(t.wire(task, "task", false))
	return raw
}

// StatusNotification is the params of notifications/tasks for task: the
// task as tasks/get shows it.
func (t *Tasks) StatusNotification(task *Task) json.RawMessage {
	w := t.wire(task, "", true)
	raw, _ := json.Marshal(struct {
		taskWire
		ResultType string `json:"resultType,omitempty"`
	}{taskWire: w})
	return raw
}

// taskParams are the params of tasks/get, tasks/update and tasks/cancel.
type taskParams struct {
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

// HandleRPC answers a request of the tasks extension (tasks/get,
// tasks/update, tasks/cancel) of owner, whose request declared the
// extension or not (declared): the result, or the JSON-RPC error. A
// client that did not declare the extension gets
// MissingRequiredClientCapability; an unknown task (or another owner's)
// is invalid params. ok is false for a method that is not the
// extension's.
func (t *Tasks) HandleRPC(ctx context.Context, owner string, declared bool, method string, params json.RawMessage) (result json.RawMessage, rpcErr *jsonrpc.Error, ok bool) {
	switch method {
	case methodTasksGet, methodTasksUpdate, methodTasksCancel:
	default:
		return nil, nil, false
	}
	if !declared {
		return nil, MissingTasksCapability(), true
	}
	var p taskParams
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + err.Error()}, true
		}
	}
	if p.TaskID == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "taskId is required"}, true
	}
	var err error
	switch method {
	case methodTasksGet:
		var task *Task
		if task, err = t.Get(ctx, owner, p.TaskID); err == nil {
			raw, _ := json.Marshal(t.wire(task, "complete", true))
			return raw, nil, true
		}
	case methodTasksUpdate:
		if p.InputResponses == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "inputResponses is required"}, true
		}
		err = t.Update(ctx, owner, p.TaskID, p.InputResponses)
	case methodTasksCancel:
		err = t.Cancel(ctx, owner, p.TaskID)
	}
	var inputErr *TaskInputError
	switch {
	case err == nil:
		return json.RawMessage(`{"resultType":"complete"}`), nil, true
	case errors.Is(err, ErrTaskNotFound):
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown task %q", shortID(p.TaskID))}, true
	case errors.As(err, &inputErr):
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}, true
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}, true
}

// MissingTasksCapability is the error of a request that needs the tasks
// extension from a client that did not declare it: -32021 with the
// capability it requires.
func MissingTasksCapability() *jsonrpc.Error {
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}})
	return &jsonrpc.Error{Code: codeMissingCapable, Message: "the tasks extension " + TasksExtension + " is required", Data: data}
}

// DeclaresTasks reports whether client capabilities (as _meta's
// io.modelcontextprotocol/clientCapabilities or initialize's capabilities
// carry them) declare the tasks extension.
func DeclaresTasks(caps json.RawMessage) bool {
	var c struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(caps, &c) != nil {
		return false
	}
	_, ok := c.Extensions[TasksExtension]
	return ok
}

// shortID bounds an id a client sent before it is quoted back in an error.
func shortID(id string) string {
	if len(id) > 64 {
		return id[:64] + "..."
	}
	return id
}
