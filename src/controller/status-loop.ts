/**
 * A leader's status loop: runs `pass` now and then every `intervalMs` after the
 * previous pass ends (never two at once), reporting failures to `onError`, until
 * stopped. The CapacityBuffer and ProvisioningRequest status writers run on it.
 */
export class StatusLoop {
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly pass: () => Promise<unknown>,
    private readonly intervalMs: number,
    private readonly onError: (err: Error) => void,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    const loop = async () => {
      if (!this.running) return;
      await this.pass().catch((err: Error) => this.onError(err));
      if (this.running) this.timer = setTimeout(() => void loop(), this.intervalMs);
    };
    void loop();
  }

  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
  }
}
