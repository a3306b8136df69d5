/** Lengths of time in configuration: milliseconds, or a string such as `"90s"`, `"30m"`, `"24h"`, `"7d"`. */
export type Duration = number | `${number}${"s" | "m" | "h" | "d"}`;

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Milliseconds of a duration; a TypeError naming `what` for anything else, so a bad option fails where it is set. */
export function durationMs(duration: Duration, what: string): number {
  if (typeof duration === "number") {
    if (Number.isFinite(duration) && duration > 0) return duration;
  } else {
    const match = /^(\d+(?:\.\d+)?)([smhd])$/.exec(duration);
    if (match) return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  }
  throw new TypeError(
    `${what} must be a positive number of milliseconds or a duration such as "90s", "30m", "24h" or "7d", not ${JSON.stringify(duration)}.`,
  );
}
