/** Runs async work one at a time per key (in this process); other keys run concurrently. */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `work` after every earlier `run` with the same key has settled. */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const tail = next.catch(() => {});
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return next;
  }
}
