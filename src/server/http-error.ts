/** An error that becomes an HTTP status with a JSON `{message}` body (one line). */
export class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}
