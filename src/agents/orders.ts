/** A small order fixture so the demo network's tools have something real to look up. */
export interface Order {
  orderId: string;
  customer: string;
  item: string;
  amountUsd: number;
  status: "processing" | "shipped" | "delivered";
  charges: number;
  shippingAddress: string;
}

export const ORDERS: readonly Order[] = [
  {
    orderId: "A1001",
    customer: "Ada",
    item: "Mechanical keyboard",
    amountUsd: 129,
    status: "shipped",
    charges: 2,
    shippingAddress: "12 Analytical St, London",
  },
  {
    orderId: "A1002",
    customer: "Grace",
    item: "USB-C dock",
    amountUsd: 89.5,
    status: "processing",
    charges: 1,
    shippingAddress: "3 Compiler Ave, Arlington",
  },
  {
    orderId: "A1003",
    customer: "Alan",
    item: "Noise-cancelling headphones",
    amountUsd: 249,
    status: "delivered",
    charges: 1,
    shippingAddress: "9 Enigma Rd, Manchester",
  },
];

export function findOrder(orderId: string): Order | undefined {
  return ORDERS.find((order) => order.orderId.toLowerCase() === orderId.trim().toLowerCase());
}
