import { NothingHere } from "@/components/nothing-here";

export default function NotFound() {
  return <NothingHere />;
}
