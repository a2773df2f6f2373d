/**
 * The read tools of the τ-bench retail domain: find a user by email or by name and zip, the
 * details of a user, order or product, and the product types. Answers as the benchmark gives
 * them: an id, a record, or its error string.
 */
import type { RetailOrder, RetailProduct, RetailUser, RetailView } from './retail-records.js';

/** A read's answer: the benchmark's value, or its error string. */
export type RetailReadResult =
  | { readonly kind: 'error'; readonly message: string }
  | {
      readonly kind: 'found';
      readonly result: string | RetailUser | RetailOrder | RetailProduct | Record<string, string>;
    };

const userNotFound: RetailReadResult = { kind: 'error', message: 'Error: user not found' };

/** `find_user_id_by_email`: the first user whose email matches, ignoring case. */
export function findUserIdByEmail(view: RetailView, args: { email: string }): RetailReadResult {
  const wanted = args.email.toLowerCase();
  const match = view.users().find(([, user]) => user.email.toLowerCase() === wanted);
  return match === undefined ? userNotFound : { kind: 'found', result: match[0] };
}

/** `find_user_id_by_name_zip`: names ignore case, the zip must be exact. */
export function findUserIdByNameZip(
  view: RetailView,
  args: { first_name: string; last_name: string; zip: string },
): RetailReadResult {
  const first = args.first_name.toLowerCase();
  const last = args.last_name.toLowerCase();
  const match = view
    .users()
    .find(
      ([, user]) =>
        user.name.first_name.toLowerCase() === first &&
        user.name.last_name.toLowerCase() === last &&
        user.address.zip === args.zip,
    );
  return match === undefined ? userNotFound : { kind: 'found', result: match[0] };
}

/** `get_user_details`. */
export function getUserDetails(view: RetailView, args: { user_id: string }): RetailReadResult {
  const user = view.user(args.user_id);
  return user === undefined ? userNotFound : { kind: 'found', result: user };
}

/** `get_order_details`. */
export function getOrderDetails(view: RetailView, args: { order_id: string }): RetailReadResult {
  const order = view.order(args.order_id);
  return order === undefined
    ? { kind: 'error', message: 'Error: order not found' }
    : { kind: 'found', result: order };
}

/** `get_product_details`. */
export function getProductDetails(
  view: RetailView,
  args: { product_id: string },
): RetailReadResult {
  const product = view.product(args.product_id);
  return product === undefined
    ? { kind: 'error', message: 'Error: product not found' }
    : { kind: 'found', result: product };
}

/** `list_all_product_types`: product name → product id, sorted by name. */
export function listAllProductTypes(view: RetailView): RetailReadResult {
  const byName = new Map<string, string>();
  for (const product of view.products()) byName.set(product.name, product.product_id);
  const names = [...byName.keys()].sort((left, right) =>
    left < right ? -1 : left > right ? 1 : 0,
  );
  const result: Record<string, string> = {};
  for (const name of names) result[name] = byName.get(name) ?? '';
  return { kind: 'found', result };
}
