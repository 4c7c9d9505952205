/**
 * A first-come-first-served counting semaphore: at most `size` holders at once, the rest wait in
 * arrival order. A released slot passes straight to the next waiter.
 */
export class RunSlots {
  readonly #size: number;
  readonly #waiting: (() => void)[] = [];
  #taken = 0;

  constructor(size: number) {
    this.#size = size;
  }

  acquire(): Promise<void> {
    if (this.#taken < this.#size) {
      this.#taken++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#taken--;
  }
}
