/**
 * File-backed sandbox state: a snapshot file plus an append-only journal with group commit.
 * A write is committed when its journal line is on disk (fdatasync by default); see
 * docs/decisions/010-sandbox-state-journal.md for the durability this gives and why.
 */
import { createHash } from 'node:crypto';
import { type FileHandle, mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import * as path from 'node:path';
import { SandboxConfigError } from './sandbox-errors.js';
import type { JsonRecord, StateChange } from './sandbox-types.js';

/** How hard a commit is pushed to storage before the provider answers. */
export const SandboxDurability = {
  /** `fdatasync` of the journal (shared by concurrent writes) before answering. */
  fsync: 'fsync',
  /** Written to the operating system before answering: survives a sandbox crash, not power loss. */
  os: 'os',
} as const;
export type SandboxDurability = (typeof SandboxDurability)[keyof typeof SandboxDurability];

/** What a committed write left as evidence; persisted with the write in one journal line. */
export interface SandboxReceipt {
  /** `rcpt_000001`, counting every committed write since the last reset. */
  readonly receiptId: string;
  readonly provider: string;
  readonly operation: string;
  readonly objectId: string;
  /** The semantic effect key the caller put on the write, or `null`. */
  readonly effectKey: string | null;
  readonly amountMinor?: number;
  readonly currency?: string;
  readonly details?: Readonly<Record<string, unknown>>;
  readonly idempotencyKey: string | null;
  readonly requestId: string;
  /** ISO-8601 time of the commit, from the sandbox clock. */
  readonly committedAt: string;
}

/** Provider → collection → records in insertion order, each as `[id, record]`. */
export type ProvidersState = Record<string, Record<string, [string, JsonRecord][]>>;

interface StateFile {
  readonly format: 'sideguard-sandbox-state';
  readonly version: 1;
  readonly seed: number;
  /** Incremented on every open, so request ids differ between runs on one state. */
  readonly generation: number;
  readonly idSequence: number;
  readonly commitSequence: number;
  readonly providers: ProvidersState;
  readonly receipts: SandboxReceipt[];
}

interface JournalLine {
  readonly commit: number;
  readonly idSequence: number;
  readonly changes: readonly { p: string; c: string; i: string; v: JsonRecord }[];
  readonly receipt?: SandboxReceipt;
}

/** Options for {@link FileStateStore.open}. */
export interface StateStoreOptions {
  readonly stateDir: string;
  /** Seed to use when the directory is empty; must match a stored state's seed when given. */
  readonly seed: number | undefined;
  readonly durability: SandboxDurability;
  /** Builds the seed state of every provider for a seed. */
  readonly seedState: (seed: number) => ProvidersState;
}

const stateFileName = 'state.json';
const journalFileName = 'journal.jsonl';
const lockFileName = 'sandbox.lock';
const snapshotNamePattern = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** Default seed when neither the caller nor the state directory names one. */
export const defaultSandboxSeed = 1;

/** Sandbox state held in memory and persisted in `stateDir`; one process owns a directory. */
export class FileStateStore {
  private collections = new Map<string, Map<string, JsonRecord>>();
  private receiptList: SandboxReceipt[] = [];
  private idSequence = 0;
  private commitSequence = 0;
  private pendingLines: string[] = [];
  private pendingWaiters: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  private flushScheduled = false;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;

  private constructor(
    private readonly options: StateStoreOptions,
    /** The seed this state was built from; reset returns to it. */
    readonly seed: number,
    /** How many times this directory has been opened. */
    readonly generation: number,
    private journal: FileHandle,
  ) {}

  /** Opens (or creates) the state in `stateDir`, replays the journal and compacts it. */
  static async open(options: StateStoreOptions): Promise<FileStateStore> {
    await mkdir(path.join(options.stateDir, 'snapshots'), { recursive: true });
    await acquireLock(options.stateDir);
    try {
      const stored = await readStateFile(options.stateDir);
      if (stored !== undefined && options.seed !== undefined && stored.seed !== options.seed) {
        throw new SandboxConfigError(
          'sandbox_seed_mismatch',
          `Failed to open sandbox state: ${options.stateDir} holds seed ${stored.seed}, not ${options.seed}; use another state directory or reset it`,
          { data: { stateDir: options.stateDir, storedSeed: stored.seed, seed: options.seed } },
        );
      }
      const seed = stored?.seed ?? options.seed ?? defaultSandboxSeed;
      const journal = await open(path.join(options.stateDir, journalFileName), 'a+');
      const store = new FileStateStore(options, seed, (stored?.generation ?? 0) + 1, journal);
      if (stored === undefined) {
        store.load(options.seedState(seed), [], 0, 0);
      } else {
        store.load(stored.providers, stored.receipts, stored.idSequence, stored.commitSequence);
      }
      await store.replayJournal();
      await store.compact();
      return store;
    } catch (error) {
      await releaseLock(options.stateDir);
      throw error;
    }
  }

  /** One record, or `undefined`. */
  get(provider: string, collection: string, id: string): JsonRecord | undefined {
    return this.collections.get(`${provider}/${collection}`)?.get(id);
  }

  /** Records of one collection in insertion order. */
  list(provider: string, collection: string): readonly JsonRecord[] {
    const records = this.collections.get(`${provider}/${collection}`);
    return records === undefined ? [] : [...records.values()];
  }

  /** The next id sequence number; persisted with the next commit so ids never repeat. */
  nextIdSequence(): number {
    this.idSequence += 1;
    return this.idSequence;
  }

  /** The next receipt id, counting committed writes since the last reset. */
  nextReceiptId(): string {
    return `rcpt_${String(this.receiptList.length + 1).padStart(6, '0')}`;
  }

  /**
   * Applies `changes` (and records `receipt`) in memory at once, then resolves when the
   * journal line is durable. Readers see the change before it is durable (documented).
   */
  commit(changes: readonly StateChange[], receipt?: SandboxReceipt): Promise<void> {
    if (this.closed) return Promise.reject(new Error('sandbox state is closed'));
    for (const change of changes)
      this.put(change.provider, change.collection, change.id, change.value);
    if (receipt !== undefined) this.receiptList.push(receipt);
    this.commitSequence += 1;
    const line: JournalLine = {
      commit: this.commitSequence,
      idSequence: this.idSequence,
      changes: changes.map((change) => ({
        p: change.provider,
        c: change.collection,
        i: change.id,
        v: change.value,
      })),
      ...(receipt === undefined ? {} : { receipt }),
    };
    return new Promise<void>((resolve, reject) => {
      this.pendingLines.push(`${JSON.stringify(line)}\n`);
      this.pendingWaiters.push({ resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        this.chain = this.chain.then(() => this.flushJournal());
      }
    });
  }

  /** Every receipt issued since the last reset, oldest first. */
  receipts(): readonly SandboxReceipt[] {
    return this.receiptList;
  }

  /** A deep copy of all provider state, in insertion order. */
  exportProviders(): ProvidersState {
    const result: ProvidersState = {};
    for (const [key, records] of this.collections) {
      const [provider = '', collection = ''] = key.split('/');
      result[provider] ??= {};
      const providerState = result[provider];
      if (providerState !== undefined) {
        providerState[collection] = [...records].map(([id, record]) => [
          id,
          structuredClone(record),
        ]);
      }
    }
    return result;
  }

  /**
   * SHA-256 (hex) of provider state without the `excluded` collections (bookkeeping such as
   * saved idempotent responses); equal digests mean equal provider objects.
   */
  digest(excluded: readonly string[] = []): string {
    const hash = createHash('sha256');
    for (const [key, records] of this.collections) {
      if (excluded.includes(key.slice(key.indexOf('/') + 1))) continue;
      hash.update(`${key}\n`);
      for (const [id, record] of records) hash.update(`${id}\t${JSON.stringify(record)}\n`);
    }
    return hash.digest('hex');
  }

  /** Returns every provider to its seed, forgets receipts and restarts id sequences. */
  async reset(): Promise<void> {
    this.load(this.options.seedState(this.seed), [], 0, this.commitSequence);
    await this.compact();
  }

  /** Saves provider state under `name` in `stateDir/snapshots` (replacing one of that name). */
  async saveSnapshot(name: string): Promise<void> {
    const file = this.snapshotPath(name);
    const providers = this.exportProviders();
    await this.exclusive(async () => {
      await writeFileAtomic(
        file,
        JSON.stringify({ format: 'sideguard-sandbox-snapshot', version: 1, name, providers }),
      );
    });
  }

  /**
   * Replaces provider state with the snapshot `name`. Receipts and id sequences continue:
   * a restore changes what the providers hold, not what they already issued.
   */
  async restoreSnapshot(name: string): Promise<void> {
    const file = this.snapshotPath(name);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      throw new SandboxConfigError(
        'sandbox_snapshot_missing',
        `Failed to restore snapshot ${JSON.stringify(name)}: it does not exist`,
        {
          data: { name },
        },
      );
    }
    const parsed = JSON.parse(text) as { format?: unknown; providers?: ProvidersState };
    if (parsed.format !== 'sideguard-sandbox-snapshot' || parsed.providers === undefined) {
      throw new SandboxConfigError(
        'sandbox_snapshot_invalid',
        `Failed to restore snapshot ${JSON.stringify(name)}: not a sandbox snapshot`,
      );
    }
    this.load(parsed.providers, this.receiptList, this.idSequence, this.commitSequence);
    await this.compact();
  }

  /** Names of saved snapshots, sorted. */
  async listSnapshots(): Promise<string[]> {
    const entries = await readdir(path.join(this.options.stateDir, 'snapshots'));
    return entries
      .filter((entry) => entry.endsWith('.json'))
      .map((entry) => entry.slice(0, -'.json'.length))
      .sort();
  }

  /** Flushes the journal, writes a final snapshot and releases the directory. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.compact();
    this.closed = true;
    await this.journal.close();
    await releaseLock(this.options.stateDir);
  }

  private snapshotPath(name: string): string {
    if (!snapshotNamePattern.test(name)) {
      throw new SandboxConfigError(
        'sandbox_snapshot_name_invalid',
        `Invalid snapshot name ${JSON.stringify(name)}: use 1–64 letters, digits, "_" or "-", starting with a letter or digit`,
        { data: { name } },
      );
    }
    return path.join(this.options.stateDir, 'snapshots', `${name}.json`);
  }

  private put(provider: string, collection: string, id: string, value: JsonRecord): void {
    const key = `${provider}/${collection}`;
    let records = this.collections.get(key);
    if (records === undefined) {
      records = new Map();
      this.collections.set(key, records);
    }
    records.set(id, value);
  }

  private load(
    providers: ProvidersState,
    receipts: readonly SandboxReceipt[],
    idSequence: number,
    commitSequence: number,
  ): void {
    this.collections = new Map();
    for (const [provider, collections] of Object.entries(providers)) {
      for (const [collection, records] of Object.entries(collections)) {
        const map = new Map<string, JsonRecord>();
        for (const [id, record] of records) map.set(id, record);
        this.collections.set(`${provider}/${collection}`, map);
      }
    }
    this.receiptList = [...receipts];
    this.idSequence = idSequence;
    this.commitSequence = commitSequence;
  }

  private async replayJournal(): Promise<void> {
    const text = await readFile(path.join(this.options.stateDir, journalFileName), 'utf8');
    const lines = text.split('\n');
    // A line without its newline is a write torn by a crash: it was never acknowledged.
    lines.pop();
    for (const [index, line] of lines.entries()) {
      let entry: JournalLine;
      try {
        entry = JSON.parse(line) as JournalLine;
      } catch {
        throw new SandboxConfigError(
          'sandbox_journal_corrupt',
          `Failed to open sandbox state: journal line ${index + 1} in ${this.options.stateDir} is not JSON`,
        );
      }
      if (entry.commit <= this.commitSequence) continue;
      for (const change of entry.changes) this.put(change.p, change.c, change.i, change.v);
      if (entry.receipt !== undefined) this.receiptList.push(entry.receipt);
      this.commitSequence = entry.commit;
      this.idSequence = Math.max(this.idSequence, entry.idSequence);
    }
  }

  private exclusive(task: () => Promise<void>): Promise<void> {
    const run = this.chain.then(task);
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async flushJournal(): Promise<void> {
    this.flushScheduled = false;
    const lines = this.pendingLines;
    const waiters = this.pendingWaiters;
    this.pendingLines = [];
    this.pendingWaiters = [];
    if (lines.length === 0) return;
    try {
      await this.journal.write(lines.join(''));
      if (this.options.durability === SandboxDurability.fsync) await this.journal.datasync();
      for (const waiter of waiters) waiter.resolve();
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
    }
  }

  /**
   * Writes the whole state as the new snapshot file and empties the journal. Pending journal
   * lines are already in memory state, so they become durable with the snapshot.
   */
  private compact(): Promise<void> {
    return this.exclusive(async () => {
      const waiters = this.pendingWaiters;
      this.pendingLines = [];
      this.pendingWaiters = [];
      this.flushScheduled = false;
      const file: StateFile = {
        format: 'sideguard-sandbox-state',
        version: 1,
        seed: this.seed,
        generation: this.generation,
        idSequence: this.idSequence,
        commitSequence: this.commitSequence,
        providers: this.exportProviders(),
        receipts: this.receiptList,
      };
      try {
        await writeFileAtomic(
          path.join(this.options.stateDir, stateFileName),
          JSON.stringify(file),
        );
        await this.journal.truncate(0);
        await this.journal.datasync();
        for (const waiter of waiters) waiter.resolve();
      } catch (error) {
        for (const waiter of waiters) waiter.reject(error);
        throw error;
      }
    });
  }
}

async function readStateFile(stateDir: string): Promise<StateFile | undefined> {
  const file = path.join(stateDir, stateFileName);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let parsed: Partial<StateFile>;
  try {
    parsed = JSON.parse(text) as Partial<StateFile>;
  } catch {
    throw new SandboxConfigError(
      'sandbox_state_invalid',
      `Failed to open sandbox state: ${file} is not JSON`,
    );
  }
  if (parsed.format !== 'sideguard-sandbox-state' || parsed.version !== 1) {
    throw new SandboxConfigError(
      'sandbox_state_invalid',
      `Failed to open sandbox state: ${file} is not a version 1 sandbox state file`,
    );
  }
  return parsed as StateFile;
}

async function writeFileAtomic(file: string, text: string): Promise<void> {
  const temporary = `${file}.tmp`;
  const handle = await open(temporary, 'w');
  try {
    await handle.writeFile(text);
    await handle.datasync();
  } finally {
    await handle.close();
  }
  await rename(temporary, file);
  const directory = await open(path.dirname(file), 'r');
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}

async function acquireLock(stateDir: string): Promise<void> {
  const file = path.join(stateDir, lockFileName);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const handle = await open(file, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number.parseInt(await readFile(file, 'utf8').catch(() => ''), 10);
      if (Number.isInteger(owner) && owner > 0 && isProcessAlive(owner)) {
        throw new SandboxConfigError(
          'sandbox_state_locked',
          `Failed to open sandbox state: ${stateDir} is in use by process ${owner}${owner === process.pid ? ' (this process: close the other sandbox first)' : ''}`,
          { data: { stateDir, pid: owner } },
        );
      }
      await rm(file, { force: true });
    }
  }
  throw new SandboxConfigError(
    'sandbox_state_locked',
    `Failed to open sandbox state: could not lock ${stateDir}`,
  );
}

async function releaseLock(stateDir: string): Promise<void> {
  await rm(path.join(stateDir, lockFileName), { force: true });
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
