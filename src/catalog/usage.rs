//! Token and cost accounting with pi's semantics, computed from the lines of a
//! session file without building entry objects.
//!
//! pi adds usage with JavaScript's `+=` (`usage-totals.js`): a number field
//! adds as a number, a string field turns the total into a string that every
//! later addition appends to, a missing field makes it `NaN`, and a missing
//! `usage` or `cost` throws a `TypeError`. `getSessionStats` and
//! `getUsageCostBreakdown` reproduce that exactly (`JsSum`, `Operand`); the
//! cross-session report (`UsageTally`) counts JSON numbers only.

use crate::format::entry::{for_each_element, for_each_member};
use crate::format::json::{self, Cursor, JsValue, SyntaxError};
use crate::format::json_text;
use crate::format::jsvalue;

/// A field's value as JavaScript's `+` sees it after `ToPrimitive`: objects
/// and arrays have become their strings already.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    Undefined,
    Null,
    Bool(bool),
    Num(f64),
    /// WTF-8.
    Str(Vec<u8>),
}

/// `Number.prototype.toString()` of `n`.
pub fn write_js_number(out: &mut Vec<u8>, n: f64) {
    if n.is_nan() {
        out.extend_from_slice(b"NaN");
    } else if n.is_infinite() {
        out.extend_from_slice(if n > 0.0 { b"Infinity" } else { b"-Infinity" });
    } else {
        json_text::write_number(out, n);
    }
}

impl Operand {
    fn to_number(&self) -> f64 {
        match self {
            Operand::Undefined => f64::NAN,
            Operand::Null => 0.0,
            Operand::Bool(b) => *b as u8 as f64,
            Operand::Num(n) => *n,
            // Never reached: a string operand concatenates.
            Operand::Str(_) => f64::NAN,
        }
    }

    /// `String(value)` (also what a template literal gives).
    pub fn write_string(&self, out: &mut Vec<u8>) {
        match self {
            Operand::Undefined => out.extend_from_slice(b"undefined"),
            Operand::Null => out.extend_from_slice(b"null"),
            Operand::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            Operand::Num(n) => write_js_number(out, *n),
            Operand::Str(s) => out.extend_from_slice(s),
        }
    }

    fn is_nullish(&self) -> bool {
        matches!(self, Operand::Undefined | Operand::Null)
    }
}

/// A running total: a number, or a string once a string was added to it.
#[derive(Debug, Clone, PartialEq)]
pub enum JsSum {
    Num(f64),
    Str(Vec<u8>),
}

impl Default for JsSum {
    fn default() -> Self {
        JsSum::Num(0.0)
    }
}

impl JsSum {
    /// `self += operand`.
    pub fn add(&mut self, operand: &Operand) {
        match (&mut *self, operand) {
            (JsSum::Str(s), op) => op.write_string(s),
            (JsSum::Num(n), Operand::Str(t)) => {
                let mut s = Vec::with_capacity(t.len() + 8);
                write_js_number(&mut s, *n);
                s.extend_from_slice(t);
                *self = JsSum::Str(s);
            }
            (JsSum::Num(n), op) => *n += op.to_number(),
        }
    }

    /// `self + other`.
    pub fn plus(&self, other: &JsSum) -> JsSum {
        let mut out = self.clone();
        match other {
            JsSum::Num(n) => out.add(&Operand::Num(*n)),
            JsSum::Str(s) => out.add(&Operand::Str(s.clone())),
        }
        out
    }
}

/// `usage.cost`, as far as `usage.cost.total` needs it.
#[derive(Debug, Clone, PartialEq)]
pub enum Cost {
    /// `null` or `undefined`: reading `total` throws.
    Nullish(&'static str),
    Total(Operand),
}

/// A `usage` value: an object's fields, or what a primitive gives.
#[derive(Debug, Clone, PartialEq)]
pub struct Usage {
    /// `null` or `undefined`: reading a field throws.
    pub nullish: Option<&'static str>,
    pub truthy: bool,
    pub input: Operand,
    pub output: Operand,
    pub cache_read: Operand,
    pub cache_write: Operand,
    pub cost: Cost,
}

impl Usage {
    fn absent(kind: &'static str) -> Usage {
        Usage {
            nullish: Some(kind),
            truthy: false,
            input: Operand::Undefined,
            output: Operand::Undefined,
            cache_read: Operand::Undefined,
            cache_write: Operand::Undefined,
            cost: Cost::Nullish("undefined"),
        }
    }
}

/// `TypeError: Cannot read properties of <kind> (reading '<key>')`.
fn read_error(kind: &str, key: &str) -> String {
    format!("Cannot read properties of {kind} (reading '{key}')")
}

/// What JavaScript threw: a `TypeError` (or `RangeError`) message.
#[derive(Debug, Clone, PartialEq)]
pub struct Thrown {
    pub range_error: bool,
    pub message: String,
}

impl Thrown {
    fn type_error(message: String) -> Thrown {
        Thrown {
            range_error: false,
            message,
        }
    }
}

/// The strings of values whose `ToString` needs `Array.prototype.join` and
/// nests too deep for V8's stack throw a RangeError there.
fn stack_overflow() -> Thrown {
    Thrown {
        range_error: true,
        message: "Maximum call stack size exceeded".into(),
    }
}

/// The value at the cursor as an operand (objects and arrays as strings).
fn read_operand(cur: &mut Cursor) -> Result<Result<Operand, Thrown>, SyntaxError> {
    cur.skip_ws();
    Ok(Ok(match cur.peek() {
        Some(b'"') => Operand::Str(jsvalue::string_here(cur)?),
        Some(b'-' | b'0'..=b'9') => Operand::Num(json::number_value(cur.skip_number()?)),
        Some(b'n') => {
            cur.skip_value()?;
            Operand::Null
        }
        Some(b't') => {
            cur.skip_value()?;
            Operand::Bool(true)
        }
        Some(b'f') => {
            cur.skip_value()?;
            Operand::Bool(false)
        }
        Some(b'{') => {
            cur.skip_value()?;
            Operand::Str(b"[object Object]".to_vec())
        }
        _ => {
            let start = cur.i;
            cur.skip_value()?;
            let value = json::parse(&json::decode_lossy(&cur.s[start..cur.i]))?;
            let mut s = Vec::new();
            if jsvalue::join_string(Some(&value), &mut s).is_err() {
                return Ok(Err(stack_overflow()));
            }
            Operand::Str(s)
        }
    }))
}

fn read_cost(cur: &mut Cursor) -> Result<Result<Cost, Thrown>, SyntaxError> {
    cur.skip_ws();
    match cur.peek() {
        Some(b'{') => {
            let mut total = Ok(Operand::Undefined);
            for_each_member(cur, |key, cur| {
                if key == b"total" {
                    total = read_operand(cur)?;
                } else {
                    cur.skip_value()?;
                }
                Ok(())
            })?;
            Ok(total.map(Cost::Total))
        }
        Some(b'n') => {
            cur.skip_value()?;
            Ok(Ok(Cost::Nullish("null")))
        }
        _ => {
            // A primitive or an array has no `total`.
            cur.skip_value()?;
            Ok(Ok(Cost::Total(Operand::Undefined)))
        }
    }
}

/// A `usage` value at the cursor.
pub fn read_usage(cur: &mut Cursor) -> Result<Result<Usage, Thrown>, SyntaxError> {
    cur.skip_ws();
    match cur.peek() {
        Some(b'{') => {
            let mut usage = Usage {
                nullish: None,
                truthy: true,
                cost: Cost::Nullish("undefined"),
                ..Usage::absent("undefined")
            };
            let mut thrown = None;
            for_each_member(cur, |key, cur| {
                let slot = match key {
                    b"input" => &mut usage.input,
                    b"output" => &mut usage.output,
                    b"cacheRead" => &mut usage.cache_read,
                    b"cacheWrite" => &mut usage.cache_write,
                    b"cost" => {
                        match read_cost(cur)? {
                            Ok(cost) => usage.cost = cost,
                            Err(t) => thrown = Some(t),
                        }
                        return Ok(());
                    }
                    _ => return cur.skip_value(),
                };
                match read_operand(cur)? {
                    Ok(op) => *slot = op,
                    Err(t) => thrown = Some(t),
                }
                Ok(())
            })?;
            Ok(thrown.map_or(Ok(usage), Err))
        }
        Some(b'n') => {
            cur.skip_value()?;
            Ok(Ok(Usage::absent("null")))
        }
        _ => {
            let start = cur.i;
            cur.skip_value()?;
            let truthy = json::parse(&json::decode_lossy(&cur.s[start..cur.i]))?.truthy();
            Ok(Ok(Usage {
                nullish: None,
                truthy,
                ..Usage::absent("undefined")
            }))
        }
    }
}

fn usage_at(line: &[u8], span: Option<(usize, usize)>) -> Result<Usage, Thrown> {
    match span {
        None => Ok(Usage::absent("undefined")),
        Some((s, e)) => read_usage(&mut Cursor::new(&line[s..e]))
            .unwrap_or_else(|_| Ok(Usage::absent("undefined"))),
    }
}

fn operand_at(line: &[u8], span: Option<(usize, usize)>) -> Result<Operand, Thrown> {
    match span {
        None => Ok(Operand::Undefined),
        Some((s, e)) => {
            read_operand(&mut Cursor::new(&line[s..e])).unwrap_or(Ok(Operand::Undefined))
        }
    }
}

/// The input, output, cache-read, cache-write totals and the cost of pi's
/// `createUsageTotals()`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    pub input: JsSum,
    pub output: JsSum,
    pub cache_read: JsSum,
    pub cache_write: JsSum,
    pub cost: JsSum,
}

impl Totals {
    /// `addUsageToTotals(this, usage)`.
    pub fn add(&mut self, usage: &Usage) -> Result<(), Thrown> {
        if let Some(kind) = usage.nullish {
            return Err(Thrown::type_error(read_error(kind, "input")));
        }
        self.input.add(&usage.input);
        self.output.add(&usage.output);
        self.cache_read.add(&usage.cache_read);
        self.cache_write.add(&usage.cache_write);
        match &usage.cost {
            Cost::Nullish(kind) => Err(Thrown::type_error(read_error(kind, "total"))),
            Cost::Total(total) => {
                self.cost.add(total);
                Ok(())
            }
        }
    }

    /// `input + output + cacheRead + cacheWrite`, evaluated left to right.
    pub fn tokens(&self) -> JsSum {
        self.input
            .plus(&self.output)
            .plus(&self.cache_read)
            .plus(&self.cache_write)
    }
}

/// Spans (into the line) of what accounting reads of one entry.
#[derive(Debug, Default, Clone)]
pub struct EntrySpans {
    pub usage: Option<(usize, usize)>,
    pub provider: Option<(usize, usize)>,
    pub model: Option<(usize, usize)>,
}

/// What accounting reads of a message object besides its role.
#[derive(Debug, Default, Clone)]
pub struct MessageFields {
    pub fields: EntrySpans,
    pub response_model: Option<(usize, usize)>,
}

impl MessageFields {
    /// Records the span of an accounting field of a message; `false` for
    /// other keys.
    pub fn visit(&mut self, key: &[u8], cur: &mut Cursor) -> Result<bool, SyntaxError> {
        if key == b"responseModel" {
            cur.skip_ws();
            let start = cur.i;
            cur.skip_value()?;
            self.response_model = Some((start, cur.i));
            return Ok(true);
        }
        visit_field(key, cur, &mut self.fields)
    }
}

/// `entry.message`, for accounting.
#[derive(Debug, Default, Clone)]
pub enum MessageSpans {
    #[default]
    Missing,
    Null,
    NotObject,
    Object {
        role: Option<Vec<u8>>,
        fields: EntrySpans,
        response_model: Option<(usize, usize)>,
        /// `toolCall` blocks of the content, read in the same pass.
        tool_calls: Result<u64, Thrown>,
    },
}

/// One line, read for accounting.
#[derive(Debug, Default)]
struct AccountLine {
    entry_type: Option<Vec<u8>>,
    fields: EntrySpans,
    message: MessageSpans,
}

/// Records the span of an accounting field of an entry or message; `false`
/// for other keys.
pub fn visit_field(
    key: &[u8],
    cur: &mut Cursor,
    fields: &mut EntrySpans,
) -> Result<bool, SyntaxError> {
    let slot = match key {
        b"usage" => &mut fields.usage,
        b"provider" => &mut fields.provider,
        b"model" => &mut fields.model,
        _ => return Ok(false),
    };
    cur.skip_ws();
    let start = cur.i;
    cur.skip_value()?;
    *slot = Some((start, cur.i));
    Ok(true)
}

fn read_account_message(cur: &mut Cursor) -> Result<MessageSpans, SyntaxError> {
    cur.skip_ws();
    match cur.peek() {
        Some(b'{') => {
            let mut role = None;
            let mut fields = EntrySpans::default();
            let mut response_model = None;
            let mut tool_calls = Ok(0);
            for_each_member(cur, |key, cur| {
                if visit_field(key, cur, &mut fields)? {
                    return Ok(());
                }
                cur.skip_ws();
                let start = cur.i;
                match key {
                    b"role" if cur.peek() == Some(b'"') => {
                        role = Some(jsvalue::string_here(cur)?);
                        return Ok(());
                    }
                    b"role" => role = None,
                    b"content" => {
                        tool_calls = count_tool_calls(cur)?;
                        return Ok(());
                    }
                    _ => {}
                }
                cur.skip_value()?;
                if key == b"responseModel" {
                    response_model = Some((start, cur.i));
                }
                Ok(())
            })?;
            Ok(MessageSpans::Object {
                role,
                fields,
                response_model,
                tool_calls,
            })
        }
        Some(b'n') => {
            cur.skip_value()?;
            Ok(MessageSpans::Null)
        }
        _ => {
            cur.skip_value()?;
            Ok(MessageSpans::NotObject)
        }
    }
}

/// A kept line (one `JSON.parse` accepts and that is truthy) read for
/// accounting; `None` for a line the reference skips.
fn read_account_line(line: &[u8]) -> Option<AccountLine> {
    let mut cur = Cursor::new(line);
    cur.skip_ws();
    if cur.peek() != Some(b'{') {
        let value = json::parse(&json::decode_lossy(line)).ok()?;
        return value.truthy().then(AccountLine::default);
    }
    let mut facts = AccountLine::default();
    for_each_member(&mut cur, |key, cur| {
        if visit_field(key, cur, &mut facts.fields)? {
            return Ok(());
        }
        cur.skip_ws();
        match key {
            b"type" if cur.peek() == Some(b'"') => {
                facts.entry_type = Some(jsvalue::string_here(cur)?)
            }
            b"type" => {
                facts.entry_type = None;
                cur.skip_value()?;
            }
            b"message" => facts.message = read_account_message(cur)?,
            _ => cur.skip_value()?,
        }
        Ok(())
    })
    .ok()?;
    cur.skip_ws();
    (cur.i == line.len()).then_some(facts)
}

/// The key `${provider}/${model}`.
fn model_key(provider: &Operand, model: &Operand) -> Vec<u8> {
    let mut key = Vec::new();
    provider.write_string(&mut key);
    key.push(b'/');
    model.write_string(&mut key);
    key
}

/// `Tools/summaries`: the breakdown's bucket for usage no model is named for.
pub const TOOLS_KEY: &[u8] = b"Tools/summaries";

/// Counts `toolCall` blocks of an assistant's content array; a `null` block
/// throws (`null.type`).
fn count_tool_calls(cur: &mut Cursor) -> Result<Result<u64, Thrown>, SyntaxError> {
    cur.skip_ws();
    if cur.peek() != Some(b'[') {
        cur.skip_value()?;
        return Ok(Ok(0));
    }
    let mut count = 0;
    let mut null_block = false;
    for_each_element(cur, |cur| {
        match cur.peek() {
            Some(b'n') => {
                null_block = true;
                cur.skip_value()?;
            }
            Some(b'{') => {
                let mut is_call = false;
                for_each_member(cur, |key, cur| {
                    cur.skip_ws();
                    if key == b"type" {
                        if cur.peek() == Some(b'"') {
                            is_call = jsvalue::string_here(cur)? == b"toolCall";
                        } else {
                            is_call = false;
                            cur.skip_value()?;
                        }
                        return Ok(());
                    }
                    cur.skip_value()
                })?;
                count += is_call as u64;
            }
            _ => cur.skip_value()?,
        }
        Ok(())
    })?;
    if null_block {
        return Ok(Err(Thrown::type_error(read_error("null", "type"))));
    }
    Ok(Ok(count))
}

/// The numbers of `AgentSession.getSessionStats()` (without `contextUsage`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionStats {
    pub user_messages: u64,
    pub assistant_messages: u64,
    pub tool_calls: u64,
    pub tool_results: u64,
    pub total_messages: u64,
    pub totals: Totals,
}

/// One `getUsageCostBreakdown` bucket before pi's filter and sort.
#[derive(Debug, Clone, PartialEq)]
pub struct BreakdownRow {
    pub key: Vec<u8>,
    pub totals: Totals,
}

/// pi's two loops over `getEntries()`, fed one line at a time.
#[derive(Debug, Default)]
pub struct Accounting {
    pub stats: SessionStats,
    pub stats_thrown: Option<Thrown>,
    pub breakdown: Vec<BreakdownRow>,
    pub breakdown_thrown: Option<Thrown>,
    /// Whether the first kept line was seen (it is the header, left out).
    pub header: Option<Vec<u8>>,
}

/// What pi's two loops need of one entry, read from its line: both loops can
/// then run over entries read on several threads, in file order.
#[derive(Debug)]
pub enum Event {
    /// Entries neither loop counts (headers among them).
    Other,
    Usage {
        usage: Result<Usage, Thrown>,
        key: Result<Vec<u8>, Thrown>,
    },
    /// A compaction or branch summary.
    Summary {
        usage: Result<Usage, Thrown>,
    },
    /// `entry.message` is null or undefined.
    NullishMessage(&'static str),
    /// A message whose role neither loop reads (or that is not an object).
    Message,
    User,
    Assistant {
        tool_calls: Result<u64, Thrown>,
        usage: Result<Usage, Thrown>,
        key: Result<Vec<u8>, Thrown>,
    },
    ToolResult {
        usage: Result<Usage, Thrown>,
    },
}

/// The event of a kept line; `None` for a line the reference skips.
pub fn line_event(line: &[u8]) -> Option<Event> {
    let facts = read_account_line(line)?;
    let key = |fields: &EntrySpans, model: Option<(usize, usize)>| -> Result<Vec<u8>, Thrown> {
        let provider = operand_at(line, fields.provider)?;
        let mut m = match model {
            Some(span) => operand_at(line, Some(span))?,
            None => Operand::Undefined,
        };
        if m.is_nullish() {
            m = operand_at(line, fields.model)?;
        }
        Ok(model_key(&provider, &m))
    };
    Some(match facts.entry_type.as_deref() {
        Some(b"usage") => Event::Usage {
            usage: usage_at(line, facts.fields.usage),
            key: key(&facts.fields, None),
        },
        Some(b"branch_summary" | b"compaction") => Event::Summary {
            usage: usage_at(line, facts.fields.usage),
        },
        Some(b"message") => match &facts.message {
            MessageSpans::Missing => Event::NullishMessage("undefined"),
            MessageSpans::Null => Event::NullishMessage("null"),
            MessageSpans::NotObject => Event::Message,
            MessageSpans::Object {
                role,
                fields,
                response_model,
                tool_calls,
            } => match role.as_deref() {
                Some(b"user") => Event::User,
                Some(b"toolResult") => Event::ToolResult {
                    usage: usage_at(line, fields.usage),
                },
                Some(b"assistant") => Event::Assistant {
                    tool_calls: tool_calls.clone(),
                    usage: usage_at(line, fields.usage),
                    key: key(fields, *response_model),
                },
                _ => Event::Message,
            },
        },
        _ => Event::Other,
    })
}

fn nullish_message(kind: &'static str) -> Thrown {
    Thrown::type_error(read_error(kind, "role"))
}

impl Accounting {
    /// Feeds one physical line (split on `\n` only, as `loadEntriesFromFile`
    /// splits). The first kept line is the header and is not an entry.
    pub fn feed_file_line(&mut self, line: &[u8]) {
        if self.header.is_none() {
            if read_account_line(line).is_some() {
                self.header = Some(line.to_vec());
            }
            return;
        }
        self.feed_entry(line);
    }

    /// Feeds one entry's JSON text (`getEntries()` leaves out headers).
    pub fn feed_entry(&mut self, line: &[u8]) {
        let is_header = |line: &[u8]| {
            read_account_line(line).is_some_and(|f| f.entry_type.as_deref() == Some(b"session"))
        };
        if let Some(event) = line_event(line) {
            if matches!(event, Event::Other) && is_header(line) {
                return;
            }
            self.apply(&event);
        }
    }

    /// Runs both loops one entry on.
    pub fn apply(&mut self, event: &Event) {
        if self.stats_thrown.is_none() {
            if let Err(t) = self.stats_step(event) {
                self.stats_thrown = Some(t);
            }
        }
        if self.breakdown_thrown.is_none() {
            if let Err(t) = self.breakdown_step(event) {
                self.breakdown_thrown = Some(t);
            }
        }
    }

    fn stats_step(&mut self, event: &Event) -> Result<(), Thrown> {
        let stats = &mut self.stats;
        match event {
            Event::Other => {}
            Event::Usage { usage, .. } => {
                stats.totals.add(usage.as_ref().map_err(Clone::clone)?)?
            }
            Event::Summary { usage } => {
                let usage = usage.as_ref().map_err(Clone::clone)?;
                if usage.truthy {
                    stats.totals.add(usage)?;
                }
            }
            Event::NullishMessage(kind) => {
                stats.total_messages += 1;
                return Err(nullish_message(kind));
            }
            Event::Message => stats.total_messages += 1,
            Event::User => {
                stats.total_messages += 1;
                stats.user_messages += 1;
            }
            Event::ToolResult { usage } => {
                stats.total_messages += 1;
                stats.tool_results += 1;
                let usage = usage.as_ref().map_err(Clone::clone)?;
                if usage.truthy {
                    stats.totals.add(usage)?;
                }
            }
            Event::Assistant {
                tool_calls, usage, ..
            } => {
                stats.total_messages += 1;
                stats.assistant_messages += 1;
                stats.tool_calls += tool_calls.as_ref().map_err(Clone::clone)?;
                stats.totals.add(usage.as_ref().map_err(Clone::clone)?)?;
            }
        }
        Ok(())
    }

    fn breakdown_step(&mut self, event: &Event) -> Result<(), Thrown> {
        let (key, usage) = match event {
            Event::NullishMessage(kind) => return Err(nullish_message(kind)),
            Event::Assistant { key, usage, .. } | Event::Usage { key, usage } => {
                let key = key.as_ref().map_err(Clone::clone)?;
                (key.as_slice(), usage.as_ref().map_err(Clone::clone)?)
            }
            Event::ToolResult { usage } | Event::Summary { usage } => {
                (TOOLS_KEY, usage.as_ref().map_err(Clone::clone)?)
            }
            _ => return Ok(()),
        };
        if !usage.truthy {
            return Ok(());
        }
        let row = match self.breakdown.iter().position(|r| r.key == key) {
            Some(i) => i,
            None => {
                self.breakdown.push(BreakdownRow {
                    key: key.to_vec(),
                    totals: Totals::default(),
                });
                self.breakdown.len() - 1
            }
        };
        self.breakdown[row].totals.add(usage)
    }
}

/// What one usage-bearing entry adds to a report: JSON numbers only.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Amounts {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub cost: f64,
}

impl Amounts {
    fn of(usage: &Usage) -> Amounts {
        let num = |op: &Operand| match op {
            Operand::Num(n) => *n,
            _ => 0.0,
        };
        Amounts {
            input: num(&usage.input),
            output: num(&usage.output),
            cache_read: num(&usage.cache_read),
            cache_write: num(&usage.cache_write),
            cost: match &usage.cost {
                Cost::Total(total) => num(total),
                Cost::Nullish(_) => 0.0,
            },
        }
    }

    pub fn add(&mut self, other: &Amounts) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.cost += other.cost;
    }

    pub fn tokens(&self) -> f64 {
        self.input + self.output + self.cache_read + self.cache_write
    }

    /// input, output, cacheRead, cacheWrite, cost.
    pub fn values(&self) -> [f64; 5] {
        [
            self.input,
            self.output,
            self.cache_read,
            self.cache_write,
            self.cost,
        ]
    }

    pub fn from_values([input, output, cache_read, cache_write, cost]: [f64; 5]) -> Amounts {
        Amounts {
            input,
            output,
            cache_read,
            cache_write,
            cost,
        }
    }
}

/// Quarter hours since the epoch: every zone's offset is a multiple of 15
/// minutes and changes on such a boundary, so one quarter hour falls on one
/// local day in any zone.
pub const SLOT_MS: f64 = 900_000.0;

/// A file's usage, added up per (quarter hour, model key), in the order the
/// buckets first appear in the file.
///
/// A fork (a header with `parentSession`) starts with copies of its parent's
/// entries; reports across sessions count a copy only where it was first
/// written (`usage_origin`). So each usage entry with an id leaves its
/// fingerprint (a file may be a parent), and a fork keeps its entries one by
/// one, to add up again without the copies.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageTally {
    /// The header's `cwd` as `SessionInfo.cwd` has it ("" if not a string).
    pub cwd: String,
    /// The header's `parentSession`, when it is a non-empty string.
    pub parent: Option<String>,
    pub keys: Vec<Vec<u8>>,
    pub buckets: Vec<Bucket>,
    /// One per usage entry with a string id, in file order; a fork's are in
    /// its `records` instead (see `fingerprints()`).
    fingerprints: Vec<u64>,
    /// A fork's usage entries in file order (empty for other files).
    pub records: Vec<Record>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bucket {
    pub slot: i64,
    pub key: u32,
    pub amounts: Amounts,
}

/// One usage entry of a fork.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Record {
    /// `None`: the entry has no string id, so it is no copy.
    pub fingerprint: Option<u64>,
    pub slot: i64,
    pub key: u32,
    pub amounts: Amounts,
}

/// What tells a copy of an entry from another entry: its id, its timestamp
/// (both decoded strings), its model key and what it adds to a report. The
/// hash is persisted in the accounting cache, so its seed is fixed.
pub fn fingerprint(id: &[u8], timestamp: &[u8], key: &[u8], amounts: &Amounts) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = foldhash::fast::FixedState::with_seed(0x1319_8a2e_0370_7344).build_hasher();
    for part in [id, timestamp, key] {
        h.write_usize(part.len());
        h.write(part);
    }
    for v in amounts.values() {
        h.write_u64(v.to_bits());
    }
    h.finish()
}

/// Adds `amounts` to the bucket of (`slot`, `key`), made if it is new.
pub fn add_to_buckets(buckets: &mut Vec<Bucket>, slot: i64, key: u32, amounts: &Amounts) {
    // Entries come mostly in time order: the bucket is usually the last.
    match buckets
        .iter_mut()
        .rev()
        .find(|b| b.slot == slot && b.key == key)
    {
        Some(bucket) => bucket.amounts.add(amounts),
        None => buckets.push(Bucket {
            slot,
            key,
            amounts: *amounts,
        }),
    }
}

impl UsageTally {
    /// Adds one usage entry; `fingerprint` is `None` for an entry without a
    /// string id.
    pub fn add(&mut self, slot: i64, key: &[u8], amounts: &Amounts, fingerprint: Option<u64>) {
        let key = match self.keys.iter().position(|k| k == key) {
            Some(i) => i as u32,
            None => {
                self.keys.push(key.to_vec());
                (self.keys.len() - 1) as u32
            }
        };
        add_to_buckets(&mut self.buckets, slot, key, amounts);
        if self.parent.is_some() {
            self.records.push(Record {
                fingerprint,
                slot,
                key,
                amounts: *amounts,
            });
        } else if let Some(fp) = fingerprint {
            self.fingerprints.push(fp);
        }
    }

    /// The fingerprints of the usage entries with a string id, in file order:
    /// what a fork of this file may have copied.
    pub fn fingerprints(&self) -> impl Iterator<Item = u64> + '_ {
        self.fingerprints
            .iter()
            .copied()
            .chain(self.records.iter().filter_map(|r| r.fingerprint))
    }

    /// Starts the tally of a file with its header line.
    pub fn set_header(&mut self, header: &[u8]) {
        let header = json::parse(&json::decode_lossy(header)).ok();
        let text = |name: &str| {
            header
                .as_ref()
                .and_then(|h| h.get(name).and_then(|c| c.as_str().map(|s| s.into_owned())))
        };
        self.cwd = text("cwd").unwrap_or_default();
        self.parent = text("parentSession").filter(|p| !p.is_empty());
    }

    pub fn encode(&self, out: &mut crate::catalog::codec::Encoder) {
        out.bytes(self.cwd.as_bytes());
        out.opt_bytes(self.parent.as_deref().map(str::as_bytes));
        out.u64(self.keys.len() as u64);
        for key in &self.keys {
            out.bytes(key);
        }
        let amounts = |out: &mut crate::catalog::codec::Encoder, a: &Amounts| {
            for v in a.values() {
                out.u64(v.to_bits());
            }
        };
        out.u64(self.buckets.len() as u64);
        for b in &self.buckets {
            out.u64(b.slot as u64);
            out.u64(b.key as u64);
            amounts(out, &b.amounts);
        }
        out.u64(self.fingerprints.len() as u64);
        for fp in &self.fingerprints {
            out.u64(*fp);
        }
        out.u64(self.records.len() as u64);
        for r in &self.records {
            out.u64(r.fingerprint.is_some() as u64);
            out.u64(r.fingerprint.unwrap_or(0));
            out.u64(r.slot as u64);
            out.u64(r.key as u64);
            amounts(out, &r.amounts);
        }
    }

    pub fn decode(input: &mut crate::catalog::codec::Decoder) -> Option<UsageTally> {
        let cwd = input.string()?;
        let parent = input.opt_string()?;
        let n = input.u64()?;
        let mut keys = Vec::new();
        for _ in 0..n {
            keys.push(input.bytes()?.to_vec());
        }
        let key_index = |input: &mut crate::catalog::codec::Decoder| {
            u32::try_from(input.u64()?)
                .ok()
                .filter(|&k| (k as usize) < keys.len())
        };
        let amounts = |input: &mut crate::catalog::codec::Decoder| {
            let mut v = [0.0; 5];
            for x in &mut v {
                *x = f64::from_bits(input.u64()?);
            }
            Some(Amounts::from_values(v))
        };
        let n = input.u64()?;
        let mut buckets = Vec::new();
        for _ in 0..n {
            let slot = input.u64()? as i64;
            let key = key_index(input)?;
            buckets.push(Bucket {
                slot,
                key,
                amounts: amounts(input)?,
            });
        }
        let n = input.u64()?;
        let mut fingerprints = Vec::new();
        for _ in 0..n {
            fingerprints.push(input.u64()?);
        }
        let n = input.u64()?;
        let mut records = Vec::new();
        for _ in 0..n {
            let has = input.u64()? != 0;
            let fp = input.u64()?;
            let slot = input.u64()? as i64;
            let key = key_index(input)?;
            records.push(Record {
                fingerprint: has.then_some(fp),
                slot,
                key,
                amounts: amounts(input)?,
            });
        }
        Some(UsageTally {
            cwd,
            parent,
            keys,
            buckets,
            fingerprints,
            records,
        })
    }
}

/// Milliseconds since the epoch of an entry's `timestamp` (a JSON string in
/// pi's form, or RFC 3339 with an offset); `None` otherwise.
pub fn entry_time(text: &[u8]) -> Option<f64> {
    let s = jsvalue::string_here(&mut Cursor::new(text)).ok()?;
    let s = std::str::from_utf8(&s).ok()?;
    crate::format::entry::iso_time(s).or_else(|| {
        s.parse::<jiff::Timestamp>()
            .ok()
            .map(|t| t.as_millisecond() as f64)
    })
}

/// What a report counts of one entry (`None`: nothing), by pi's rules: usage
/// entries, assistant usage, tool results with usage, compactions and branch
/// summaries with usage. Fields that are not JSON numbers count as 0.
pub fn report_record(
    line: &[u8],
    entry_type: Option<&[u8]>,
    fields: &EntrySpans,
    message: Option<(Option<&[u8]>, &MessageFields)>,
) -> Option<(Vec<u8>, Amounts)> {
    let plain = |r: Result<Operand, Thrown>| r.unwrap_or(Operand::Undefined);
    let (key, usage) = match (entry_type, message) {
        (
            Some(b"message"),
            Some((
                Some(role),
                MessageFields {
                    fields,
                    response_model,
                },
            )),
        ) => match role {
            b"assistant" => {
                let provider = plain(operand_at(line, fields.provider));
                let mut model = plain(operand_at(line, *response_model));
                if model.is_nullish() {
                    model = plain(operand_at(line, fields.model));
                }
                (model_key(&provider, &model), usage_at(line, fields.usage))
            }
            b"toolResult" => (TOOLS_KEY.to_vec(), usage_at(line, fields.usage)),
            _ => return None,
        },
        (Some(b"usage"), _) => {
            let provider = plain(operand_at(line, fields.provider));
            let model = plain(operand_at(line, fields.model));
            (model_key(&provider, &model), usage_at(line, fields.usage))
        }
        (Some(b"branch_summary" | b"compaction"), _) => {
            (TOOLS_KEY.to_vec(), usage_at(line, fields.usage))
        }
        _ => return None,
    };
    let usage = usage.ok()?;
    (usage.truthy && usage.nullish.is_none()).then(|| (key, Amounts::of(&usage)))
}

/// Reads a whole session file for `getSessionStats`/`getUsageCostBreakdown`.
/// `None` when the file is not a pi session (no header first).
pub fn account_file(
    path: &std::path::Path,
) -> Result<Accounting, crate::session::store::IoFailure> {
    let file = crate::session::store::open_read(path)?;
    // The lines are read on several threads; the loops then run in file order.
    let (events, _, _) =
        crate::session::read_lines_parallel_in(&file, Some(256 << 10), line_event)?;
    let mut accounting = Accounting::default();
    let mut events = events.into_iter();
    if let Some((offset, len, _)) = events.next() {
        accounting.header = Some(crate::session::store::read_at(&file, offset, len)?);
    }
    for (_, _, event) in events {
        accounting.apply(&event);
    }
    Ok(accounting)
}

/// Whether the header line is one `loadEntriesFromFile` accepts (`type`
/// "session" and a string `id`); its id as JSON text if so.
pub fn header_id(header: &[u8]) -> Option<JsValue> {
    let value = json::parse(&json::decode_lossy(header)).ok()?;
    if value.get("type").and_then(JsValue::as_str).as_deref() != Some("session") {
        return None;
    }
    match value.get("id") {
        Some(id @ JsValue::Str(_)) => Some(id.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accounting(lines: &[&str]) -> Accounting {
        let mut a = Accounting::default();
        for l in lines {
            a.feed_file_line(l.as_bytes());
        }
        a
    }

    const HEADER: &str = r#"{"type":"session","id":"s"}"#;

    #[test]
    fn sums_like_javascript() {
        let a = accounting(&[
            HEADER,
            r#"{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall"},{"type":"text"}],"usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"cost":{"total":0.1}}}}"#,
            r#"{"type":"usage","usage":{"input":"5","output":2,"cacheRead":3,"cacheWrite":4,"cost":{"total":0.2}}}"#,
            r#"{"type":"compaction","usage":{"output":1,"cost":{"total":null}}}"#,
            r#"{"type":"message","message":{"role":"toolResult","usage":0}}"#,
        ]);
        assert_eq!(a.stats_thrown, None);
        let s = &a.stats;
        assert_eq!(
            (
                s.assistant_messages,
                s.tool_calls,
                s.tool_results,
                s.total_messages
            ),
            (1, 1, 1, 2)
        );
        assert_eq!(s.totals.input, JsSum::Str(b"15undefined".to_vec()));
        assert_eq!(s.totals.output, JsSum::Num(5.0));
        assert!(matches!(s.totals.cache_read, JsSum::Num(n) if n.is_nan()));
        // `null` adds as 0.
        assert_eq!(s.totals.cost, JsSum::Num(0.1 + 0.2 + 0.0));
    }

    #[test]
    fn missing_usage_throws_as_javascript_does() {
        let a = accounting(&[
            HEADER,
            r#"{"type":"message","message":{"role":"assistant","content":[]}}"#,
        ]);
        assert_eq!(
            a.stats_thrown.unwrap().message,
            "Cannot read properties of undefined (reading 'input')"
        );
        // The breakdown skips it.
        assert_eq!(a.breakdown_thrown, None);
        let a = accounting(&[HEADER, r#"{"type":"usage","usage":{"input":1}}"#]);
        assert_eq!(
            a.stats_thrown.unwrap().message,
            "Cannot read properties of undefined (reading 'total')"
        );
    }

    #[test]
    fn tally_buckets_by_slot_and_key() {
        for fork in [false, true] {
            let mut t = UsageTally::default();
            t.set_header(if fork {
                br#"{"type":"session","cwd":"/w","parentSession":"/s/p.jsonl"}"#
            } else {
                br#"{"type":"session","cwd":"/w","parentSession":""}"#
            });
            let one = Amounts {
                input: 1.0,
                ..Amounts::default()
            };
            t.add(1, b"a/b", &one, Some(7));
            t.add(1, b"a/b", &one, None);
            t.add(2, b"a/b", &one, Some(9));
            t.add(1, TOOLS_KEY, &one, Some(7));
            assert_eq!(t.keys.len(), 2);
            assert_eq!(t.buckets.len(), 3);
            assert_eq!(t.buckets[0].amounts.input, 2.0);
            assert_eq!(t.fingerprints().collect::<Vec<_>>(), [7, 9, 7]);
            assert_eq!(t.parent.is_some(), fork);
            assert_eq!(t.records.len(), if fork { 4 } else { 0 });
            let mut enc = crate::catalog::codec::Encoder::default();
            t.encode(&mut enc);
            let back =
                UsageTally::decode(&mut crate::catalog::codec::Decoder::new(&enc.out)).unwrap();
            assert_eq!(back, t);
        }
    }

    #[test]
    fn a_fingerprint_tells_every_part_of_an_entry() {
        let a = Amounts {
            input: 1.0,
            cost: 0.5,
            ..Amounts::default()
        };
        let base = fingerprint(b"ab12", b"2024-01-01T00:00:00.000Z", b"p/m", &a);
        assert_eq!(
            base,
            fingerprint(b"ab12", b"2024-01-01T00:00:00.000Z", b"p/m", &a)
        );
        let b = Amounts { cost: 0.25, ..a };
        for other in [
            fingerprint(b"ab13", b"2024-01-01T00:00:00.000Z", b"p/m", &a),
            fingerprint(b"ab12", b"2024-01-01T00:00:00.001Z", b"p/m", &a),
            fingerprint(b"ab12", b"2024-01-01T00:00:00.000Z", b"p/n", &a),
            fingerprint(b"ab12", b"2024-01-01T00:00:00.000Z", b"p/m", &b),
            // The parts are not merely concatenated.
            fingerprint(b"ab122024", b"-01-01T00:00:00.000Z", b"p/m", &a),
        ] {
            assert_ne!(base, other);
        }
    }
}
