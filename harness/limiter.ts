// Runs tasks in the order they were given, at most a fixed number at once.

/**
 * Returns a function that runs each task it is given once fewer than `width` are running, first come first served;
 * a task given with `first` goes ahead of those waiting (a chain of tasks that is the run's long pole, say).
 */
export function createLimiter(width: number): <T>(task: () => Promise<T>, options?: { first?: boolean }) => Promise<T> {
  if (!Number.isInteger(width) || width < 1)
    throw new RangeError(`concurrency must be a whole number of at least 1, not ${width}`);
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task, options) => {
    if (running >= width)
      await new Promise<void>((resolve) => (options?.first ? waiting.unshift(resolve) : waiting.push(resolve)));
    else running++;
    try {
      return await task();
    } finally {
      // The place passes straight to the next waiter, so that no newcomer overtakes it.
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}
