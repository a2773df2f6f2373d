/**
 * Lets the host's built-in `fetch` claim the process's undici global dispatcher before the
 * `undici` package loads. Loading `undici` installs its own Agent there when the slot is empty,
 * and on Node 20 the built-in fetch (an older undici) then dispatches through that newer Agent
 * and breaks (it refuses every request with a `Content-Length` header). Reading the lazy
 * `Headers` global loads Node's built-in undici, which fills the slot with its own Agent first;
 * the kit itself never uses the global dispatcher. Import this module before `undici`.
 */
void globalThis.Headers;
