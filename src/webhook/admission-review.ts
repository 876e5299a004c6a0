import { summarizeValue } from '../scheduling/value-summary.js';
import { HttpError } from '../server/http-error.js';

/**
 * admission.k8s.io/v1 AdmissionReview, the fields Headroom reads and writes
 * (k8s.io/api/admission/v1 types.go). Field names are the JSON names on the wire.
 */
export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionRequest {
  uid: string;
  kind?: GroupVersionKind;
  resource?: GroupVersionResource;
  subResource?: string;
  operation?: Operation;
  name?: string;
  namespace?: string;
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  patch?: string;
  patchType?: 'JSONPatch';
  warnings?: string[];
}

export interface AdmissionReview {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

/** Validates the envelope; everything inside `object` is the apiserver's and read defensively. */
export function parseAdmissionReview(body: unknown): AdmissionRequest {
  if (!isObject(body)) throw new HttpError(400, 'AdmissionReview must be a JSON object');
  if (body.apiVersion !== ADMISSION_API_VERSION) {
    throw new HttpError(400, `unsupported AdmissionReview apiVersion ${summarizeValue(body.apiVersion)}; want ${ADMISSION_API_VERSION}`);
  }
  if (body.kind !== 'AdmissionReview') throw new HttpError(400, `kind must be AdmissionReview, got ${summarizeValue(body.kind)}`);
  const request = body.request;
  if (!isObject(request)) throw new HttpError(400, 'AdmissionReview has no request');
  if (typeof request.uid !== 'string' || request.uid === '') throw new HttpError(400, 'AdmissionReview request.uid is required');
  return request as unknown as AdmissionRequest;
}

export function admissionReviewResponse(response: AdmissionResponse): AdmissionReview {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
