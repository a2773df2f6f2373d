/**
 * The τ-bench retail tools as MCP tool definitions: the benchmark's names, arguments and (short)
 * descriptions. The upstream retail MCP server serves them; the gateway pins them by digest.
 */
import { retailToolArguments } from '../../sandbox/providers/retail/retail-provider.js';

/** An MCP tool definition (the fields the gateway pins). */
export interface RetailToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: {
    readonly type: 'object';
    readonly properties: Readonly<Record<string, unknown>>;
    readonly required: readonly string[];
    readonly additionalProperties: false;
  };
}

const descriptions: Readonly<Record<string, string>> = {
  find_user_id_by_email: 'Find user id by email. If not found, returns an error.',
  find_user_id_by_name_zip:
    'Find user id by first name, last name, and zip code. If the user is not found, the function will return an error message. By default, find user id by email, and only call this function if the user is not found by email or cannot remember email.',
  get_user_details: 'Get the details of a user, including their orders.',
  get_order_details: 'Get the status and details of an order.',
  get_product_details: 'Get the inventory details of a product.',
  list_all_product_types:
    'List the name and product id of all product types. Each product type has a variety of different items with unique item ids and options. There are only 50 product types in the store.',
  cancel_pending_order:
    "Cancel a pending order. If the order is already processed or delivered, it cannot be cancelled. The agent needs to explain the cancellation detail and ask for explicit user confirmation (yes/no) to proceed. If the user confirms, the order status will be changed to 'cancelled' and the payment will be refunded. The refund will be added to the user's gift card balance immediately if the payment was made using a gift card, otherwise the refund would take 5-7 business days to process. The function returns the order details after the cancellation.",
  modify_pending_order_address:
    'Modify the shipping address of a pending order. The agent needs to explain the modification detail and ask for explicit user confirmation (yes/no) to proceed.',
  modify_user_address:
    'Modify the default address of a user. The agent needs to explain the modification detail and ask for explicit user confirmation (yes/no) to proceed.',
  modify_pending_order_payment:
    'Modify the payment method of a pending order. The agent needs to explain the modification detail and ask for explicit user confirmation (yes/no) to proceed.',
  modify_pending_order_items:
    'Modify items in a pending order to new items of the same product type. For a pending order, this function can only be called once. The agent needs to explain the exchange detail and ask for explicit user confirmation (yes/no) to proceed.',
  return_delivered_order_items:
    "Return some items of a delivered order. The order status will be changed to 'return requested'. The agent needs to explain the return detail and ask for explicit user confirmation (yes/no) to proceed. The user will receive follow-up email for how and where to return the item.",
  exchange_delivered_order_items:
    'Exchange items in a delivered order to new items of the same product type. For a delivered order, return or exchange can be only done once by the agent. The agent needs to explain the exchange detail and ask for explicit user confirmation (yes/no) to proceed.',
  calculate: 'Calculate the result of a mathematical expression.',
  think:
    'Use the tool to think about something. It will not obtain new information or change the database, but just append the thought to the log. Use it when complex reasoning is needed.',
  transfer_to_human_agents:
    "Transfer the user to a human agent, with a summary of the user's issue. Only transfer if the user explicitly asks for a human agent, or if the user's issue cannot be resolved by the agent with the available tools.",
};

const argumentDescriptions: Readonly<Record<string, string>> = {
  order_id:
    "The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id.",
  user_id: "The user id, such as 'sara_doe_496'.",
  product_id:
    "The product id, such as '6086499569'. Be careful the product id is different from the item id.",
  payment_method_id:
    "The payment method id to pay or receive refund for the item price difference, such as 'gift_card_0000000' or 'credit_card_0000000'. These can be looked up from the user or order details.",
  item_ids:
    "The item ids to be modified, each such as '1008292230'. There could be duplicate items in the list.",
  new_item_ids:
    "The item ids to be modified for, each such as '1008292230'. There could be duplicate items in the list. Each new item id should match the item id in the same position and be of the same product.",
  reason:
    "The reason for cancellation, which should be either 'no longer needed' or 'ordered by mistake'.",
};

function definition(
  name: string,
  args: Readonly<Record<string, 'string' | 'string[]'>>,
): RetailToolDefinition {
  const properties: Record<string, unknown> = {};
  for (const [argument, type] of Object.entries(args)) {
    const description = argumentDescriptions[argument];
    properties[argument] = {
      ...(type === 'string' ? { type: 'string' } : { type: 'array', items: { type: 'string' } }),
      ...(description === undefined ? {} : { description }),
    };
  }
  return {
    name,
    description: descriptions[name] ?? name,
    inputSchema: {
      type: 'object',
      properties,
      required: Object.keys(args),
      additionalProperties: false,
    },
  };
}

/** Every tool of the benchmark's retail domain (16), in the benchmark's alphabetical order. */
export const retailToolDefinitions: readonly RetailToolDefinition[] = [
  ...Object.entries(retailToolArguments).map(([name, args]) => definition(name, args)),
  definition('calculate', { expression: 'string' }),
  definition('think', { thought: 'string' }),
  definition('transfer_to_human_agents', { summary: 'string' }),
].sort((left, right) => (left.name < right.name ? -1 : 1));
