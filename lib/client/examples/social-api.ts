/**
 * The examples' tool: publishing a post through some social network's API. Only the shape is
 * given here; your real API client goes in its place (the tests pass an in-memory one).
 */
import type { CanonicalReadFields } from "@reconcile/client";

export type Post = { id: string; url: string; text: string };

export interface SocialApi {
  /** Publishes; the API drops a second request with the same idempotency key. Throws ToolRefusal when it says no. */
  publish(text: string, idempotencyKey: string): Promise<Post>;
  /** A read of the public profile, independent of the publish answer: null when the post is not there. */
  find(postId: string): Promise<Post | null>;
}

export const publishIntent = (input: { text: string }) => ({ target: "social account", effect: "publish exactly one post", params: { text: input.text } });

/** The canonical read: does the profile show the post the API said it accepted? */
export async function readBack(api: SocialApi, post: Post): Promise<CanonicalReadFields> {
  const seen = await api.find(post.id);
  if (!seen) return { status: "absent", evidence: `post ${post.id} is not on the public profile`, reader: { identity: "public profile fetch" } };
  if (seen.text !== post.text) return { status: "mismatch", evidence: { object_id: seen.id, url: seen.url }, reader: { identity: "public profile fetch" } };
  return { status: "match", evidence: { object_id: seen.id, url: seen.url }, reader: { identity: "public profile fetch" } };
}
