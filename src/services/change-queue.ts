/**
 * Changes that read one document before writing another run one at a time in this process,
 * through a queue the services concerned share. An endpoint saved into a group (or naming an
 * allowed user group) checks that the group exists, a user saved into groups checks the same,
 * and a group's delete checks that nothing names it. Run concurrently, both checks could pass
 * and leave an endpoint or a user naming a deleted group, which could then never be saved again
 * as it is. Across instances that race remains (README, Several instances).
 */
export class ChangeQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(change: () => Promise<T>): Promise<T> {
    const run = this.tail.then(change);
    this.tail = run.catch(() => undefined);
    return run;
  }
}
